package wire_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An error event's frame fields are read off the error itself, and agree
// with what encoding the error as a Failure says about it.
func TestErrorFrameFields(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		err    error
		reason string
		kind   messages.ErrorKind
	}{
		"closed before exit":   {paddock.ErrClosedBeforeExit, paddock.DetailClosedBeforeExit, messages.ErrorKind_ERROR_KIND_UNAVAILABLE},
		"wrapped detail":       {fmt.Errorf("spawn: %w", &paddock.UnavailableError{Detail: "start_timeout"}), "start_timeout", messages.ErrorKind_ERROR_KIND_UNAVAILABLE},
		"exec timeout":         {&paddock.ExecTimeoutError{Timeout: time.Second}, paddock.DetailExecTimeout, messages.ErrorKind_ERROR_KIND_UNAVAILABLE},
		"denied":               {&paddock.DeniedError{Detail: "policy"}, "policy", messages.ErrorKind_ERROR_KIND_DENIED},
		"a bare kind":          {paddock.ErrNotFound, "not_found", messages.ErrorKind_ERROR_KIND_NOT_FOUND},
		"write failed":         {&paddock.WriteFailedError{Detail: "pipe"}, "pipe", messages.ErrorKind_ERROR_KIND_WRITE_FAILED},
		"provider":             {&paddock.ProviderError{Provider: "e2b", Detail: "boom"}, "boom", messages.ErrorKind_ERROR_KIND_PROVIDER},
		"outside the taxonomy": {errors.New("weird"), "error", messages.ErrorKind_ERROR_KIND_OTHER},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reason, kind := wire.ErrorFrameFields(tc.err)
			assert.Equal(t, tc.reason, reason)
			assert.Equal(t, tc.kind, kind)
			f := wire.FailureOf(tc.err)
			assert.Equal(t, f.GetKind(), kind, "the same kind as the Failure encoding")
			if f.GetDetail() != "" {
				assert.Equal(t, f.GetDetail(), reason, "the same detail as the Failure encoding")
			}
		})
	}
}

func TestFrameError(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		frame *messages.Error
		is    error
	}{
		"closed before exit":   {&messages.Error{Reason: "closed_before_exit", Kind: messages.ErrorKind_ERROR_KIND_UNAVAILABLE}, paddock.ErrClosedBeforeExit},
		"adapter panic":        {&messages.Error{Reason: "adapter_panic", Kind: messages.ErrorKind_ERROR_KIND_UNAVAILABLE}, paddock.ErrUnavailable},
		"denied":               {&messages.Error{Reason: "denied", Kind: messages.ErrorKind_ERROR_KIND_DENIED}, paddock.ErrDenied},
		"no kind: unavailable": {&messages.Error{Reason: "weird"}, paddock.ErrUnavailable},
		"other: unavailable":   {&messages.Error{Reason: "x", Kind: messages.ErrorKind_ERROR_KIND_OTHER}, paddock.ErrUnavailable},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, wire.FrameError(tc.frame), tc.is)
		})
	}
}

// Every frame reads back as the event it was made from.
func TestFramesAndEventsRoundTrip(t *testing.T) {
	t.Parallel()
	out := wire.OutputFrame("r", 1, paddock.Stdout([]byte("a")))
	errOut := wire.OutputFrame("r", 2, paddock.Stderr([]byte("b")))
	exit := wire.ExitFrame("r", 3, 2, 7)
	reason, kind := wire.ErrorFrameFields(paddock.ErrClosedBeforeExit)
	failed := wire.ErrorFrame("r", 3, 2, reason, "x", kind)

	assert.Equal(t, paddock.Stdout([]byte("a")), wire.EventOf(out))
	assert.Equal(t, paddock.Stderr([]byte("b")), wire.EventOf(errOut))
	assert.Equal(t, paddock.Exit(7), wire.EventOf(exit))
	assert.Equal(t, uint64(2), exit.GetOutputFrames())
	ev := wire.EventOf(failed)
	require.Equal(t, paddock.EventError, ev.Kind)
	require.ErrorIs(t, ev.Err, paddock.ErrClosedBeforeExit)
}
