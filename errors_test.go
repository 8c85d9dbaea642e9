package paddock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kindCase is one error of a known kind and the sentinel it must match.
type kindCase struct {
	name      string
	err       error
	kind      paddock.Kind
	sentinel  error
	transient bool
}

func kindCases() []kindCase {
	retry := 2 * time.Second
	return []kindCase{
		{"not_found sentinel", paddock.ErrNotFound, paddock.KindNotFound, paddock.ErrNotFound, false},
		{"truncated sentinel", paddock.ErrTruncated, paddock.KindTruncated, paddock.ErrTruncated, false},
		{"not_supported sentinel", paddock.ErrNotSupported, paddock.KindNotSupported, paddock.ErrNotSupported, false},
		{"already_exists sentinel", paddock.ErrAlreadyExists, paddock.KindAlreadyExists, paddock.ErrAlreadyExists, false},
		{"command_exited sentinel", paddock.ErrCommandExited, paddock.KindCommandExited, paddock.ErrCommandExited, true},
		{"rate_limited sentinel", paddock.ErrRateLimited, paddock.KindRateLimited, paddock.ErrRateLimited, true},
		{"rate_limited typed with hint", &paddock.RateLimitedError{RetryAfter: &retry}, paddock.KindRateLimited, paddock.ErrRateLimited, true},
		{"rate_limited typed without hint", &paddock.RateLimitedError{}, paddock.KindRateLimited, paddock.ErrRateLimited, true},
		{"unavailable sentinel", paddock.ErrUnavailable, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"unavailable typed", &paddock.UnavailableError{Detail: "http", Status: 503}, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"closed_before_exit", paddock.ErrClosedBeforeExit, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"exec_timeout", &paddock.ExecTimeoutError{Timeout: time.Second}, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"denied sentinel", paddock.ErrDenied, paddock.KindDenied, paddock.ErrDenied, false},
		{"denied typed", &paddock.DeniedError{Status: 401}, paddock.KindDenied, paddock.ErrDenied, false},
		{"invalid sentinel", paddock.ErrInvalid, paddock.KindInvalid, paddock.ErrInvalid, false},
		{"invalid typed", &paddock.InvalidError{Detail: paddock.DetailTerminationRequest}, paddock.KindInvalid, paddock.ErrInvalid, false},
		{"restore_failed sentinel", paddock.ErrRestoreFailed, paddock.KindRestoreFailed, paddock.ErrRestoreFailed, false},
		{"restore_failed typed", &paddock.RestoreFailedError{Detail: "disk"}, paddock.KindRestoreFailed, paddock.ErrRestoreFailed, false},
		{"write_failed sentinel", paddock.ErrWriteFailed, paddock.KindWriteFailed, paddock.ErrWriteFailed, true},
		{"write_failed typed", &paddock.WriteFailedError{Detail: "broken pipe"}, paddock.KindWriteFailed, paddock.ErrWriteFailed, true},
		{"provider sentinel", paddock.ErrProvider, paddock.KindProvider, paddock.ErrProvider, true},
		{"provider typed", &paddock.ProviderError{Provider: "e2b", Detail: "odd"}, paddock.KindProvider, paddock.ErrProvider, true},
	}
}

func TestEveryKindHasACase(t *testing.T) {
	seen := map[paddock.Kind]bool{}
	for _, c := range kindCases() {
		seen[c.kind] = true
	}
	for _, k := range paddock.Kinds() {
		assert.True(t, seen[k], "kind %s has no test case", k)
	}
	assert.Len(t, paddock.Kinds(), 12, "the taxonomy is closed at twelve kinds")
}

func TestKindsAndTransience(t *testing.T) {
	for _, c := range kindCases() {
		wrappers := map[string]error{
			"bare":           c.err,
			"fmt wrapped":    fmt.Errorf("reading: %w", c.err),
			"op wrapped":     &paddock.OpError{Op: "get", Provider: "fake", Name: "box", Err: c.err},
			"double wrapped": fmt.Errorf("outer: %w", &paddock.OpError{Op: "get", Provider: "fake", Err: c.err}),
		}
		for how, err := range wrappers {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				assert.Equal(t, c.kind, paddock.KindOf(err))
				assert.Equal(t, c.transient, paddock.IsTransient(err))
				assert.Equal(t, c.transient, c.kind.Transient())
				assert.ErrorIs(t, err, c.sentinel)
			})
		}
	}
}

func TestSentinelsAreDistinct(t *testing.T) {
	for _, a := range kindCases() {
		for _, b := range kindCases() {
			if a.kind == b.kind {
				continue
			}
			assert.NotErrorIs(t, a.err, b.sentinel, "%s must not match %s", a.name, b.kind)
		}
	}
}

func TestIsTransientOutsideTheTaxonomy(t *testing.T) {
	tests := map[string]struct {
		err  error
		want bool
	}{
		"nil":                      {nil, false},
		"unknown error":            {errors.New("something odd"), true},
		"wrapped unknown error":    {fmt.Errorf("x: %w", io.ErrUnexpectedEOF), true},
		"bare timeout":             {context.DeadlineExceeded, true},
		"unsupported public url":   {paddock.ErrNoPublicURL, false},
		"wrapped unsupported":      {fmt.Errorf("public url: %w", paddock.ErrNoPublicURL), false},
		"unknown provider":         {&paddock.UnknownProviderError{Provider: "nope"}, false},
		"wrapped unknown provider": {fmt.Errorf("x: %w", &paddock.UnknownProviderError{Provider: "nope"}), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, paddock.IsTransient(tc.err))
		})
	}
	assert.Equal(t, paddock.Kind(""), paddock.KindOf(errors.New("x")))
	assert.Equal(t, paddock.Kind(""), paddock.KindOf(paddock.ErrNoPublicURL))
	assert.Equal(t, paddock.Kind(""), paddock.KindOf(nil))
}

func TestDetailSentinels(t *testing.T) {
	cbe := fmt.Errorf("stream: %w", &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit})
	assert.ErrorIs(t, cbe, paddock.ErrClosedBeforeExit)
	assert.ErrorIs(t, cbe, paddock.ErrUnavailable)
	assert.NotErrorIs(t, cbe, paddock.ErrExecTimeout)
	assert.NotErrorIs(t, &paddock.UnavailableError{}, paddock.ErrClosedBeforeExit, "an empty detail matches no detail sentinel")

	timeout := &paddock.ExecTimeoutError{Timeout: 1500 * time.Millisecond}
	assert.ErrorIs(t, timeout, paddock.ErrExecTimeout)
	assert.ErrorIs(t, timeout, paddock.ErrUnavailable)
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, fmt.Errorf("w: %w", timeout), &et)
	assert.Equal(t, 1500*time.Millisecond, et.Timeout, "the original timeout is kept")

	term := &paddock.InvalidError{Detail: paddock.DetailTerminationRequest}
	assert.ErrorIs(t, term, paddock.ErrTerminationRequest)
	assert.NotErrorIs(t, term, paddock.ErrCheckpointOperationID)
}

func TestErrorsAsTypedData(t *testing.T) {
	retry := 3 * time.Second
	err := &paddock.OpError{Op: "create", Provider: "sprites", Err: &paddock.RateLimitedError{RetryAfter: &retry}}
	var rl *paddock.RateLimitedError
	require.ErrorAs(t, err, &rl)
	require.NotNil(t, rl.RetryAfter)
	assert.Equal(t, retry, *rl.RetryAfter)

	var pe *paddock.ProviderError
	require.ErrorAs(t, fmt.Errorf("x: %w", &paddock.ProviderError{Provider: "e2b", Detail: "weird"}), &pe)
	assert.Equal(t, paddock.Provider("e2b"), pe.Provider)
}

func TestErrorMessages(t *testing.T) {
	tests := map[string]struct {
		err  error
		want string
	}{
		"sentinel":         {paddock.ErrNotFound, "not found"},
		"detail":           {&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}, "unavailable: closed_before_exit"},
		"status":           {&paddock.DeniedError{Status: 403, Detail: "forbidden"}, "denied (http 403): forbidden"},
		"op":               {&paddock.OpError{Op: "destroy", Provider: "e2b", Name: "box", Err: paddock.ErrNotFound}, "destroy e2b/box: not found"},
		"op without name":  {&paddock.OpError{Op: "list", Provider: "e2b", Err: paddock.ErrTruncated}, "list e2b: truncated"},
		"exec timeout":     {&paddock.ExecTimeoutError{Timeout: 250 * time.Millisecond}, "unavailable: exec_timeout after 250ms"},
		"unknown provider": {&paddock.UnknownProviderError{Provider: "nope", Configured: []paddock.Provider{"sprites", "e2b"}}, `unknown sandbox provider "nope" (configured: e2b, sprites)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.err.Error()) })
	}
}
