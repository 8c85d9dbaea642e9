package supervisor_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one input to a guard: an event, or the stream's end.
type step struct {
	ev  *paddock.Event
	end error
}

func ev(e paddock.Event) step { return step{ev: &e} }
func end(err error) step      { return step{end: err} }

// render describes a frame compactly.
func render(f messages.Frame) string {
	switch f := f.(type) {
	case *messages.Stdout:
		return fmt.Sprintf("%d stdout %s", f.Seq, f.Data)
	case *messages.Stderr:
		return fmt.Sprintf("%d stderr %s", f.Seq, f.Data)
	case *messages.Exit:
		return fmt.Sprintf("%d exit %d after %d", f.Seq, f.Code, f.OutputFrames)
	case *messages.Error:
		return fmt.Sprintf("%d error %s after %d", f.Seq, f.Reason, f.OutputFrames)
	}
	return "?"
}

func TestGuard(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		steps      []step
		want       []string
		violations []string
	}{
		"output then exit": {
			steps: []step{ev(paddock.Stdout([]byte("a"))), ev(paddock.Stderr([]byte("b"))), ev(paddock.Exit(3)), end(io.EOF)},
			want:  []string{"1 stdout a", "2 stderr b", "3 exit 3 after 2"},
		},
		"a close without an exit is closed_before_exit": {
			steps: []step{ev(paddock.Stdout([]byte("partial"))), end(io.EOF)},
			want:  []string{"1 stdout partial", "2 error closed_before_exit after 1"},
		},
		"a failing Next is closed_before_exit too": {
			steps: []step{end(errors.New("connection reset"))},
			want:  []string{"1 error closed_before_exit after 0"},
		},
		"an exit already received wins over a later close": {
			steps: []step{ev(paddock.Exit(0)), end(errors.New("reset"))},
			want:  []string{"1 exit 0 after 0"},
		},
		"a second exit is dropped and reported": {
			steps:      []step{ev(paddock.Stdout([]byte("x"))), ev(paddock.Exit(0)), ev(paddock.Exit(1))},
			want:       []string{"1 stdout x", "2 exit 0 after 1"},
			violations: []string{"duplicate_terminal exit"},
		},
		"an error after an exit is dropped and reported": {
			steps:      []step{ev(paddock.Exit(0)), ev(paddock.Failed(paddock.ErrClosedBeforeExit))},
			want:       []string{"1 exit 0 after 0"},
			violations: []string{"duplicate_terminal error"},
		},
		"output after the terminal frame is dropped and reported": {
			steps:      []step{ev(paddock.Exit(0)), ev(paddock.Stdout([]byte("late")))},
			want:       []string{"1 exit 0 after 0"},
			violations: []string{"late_output stdout"},
		},
		"an adapter error event keeps its detail token as the reason": {
			steps: []step{ev(paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailStartTimeout}))},
			want:  []string{"1 error start_timeout after 0"},
		},
		"an error event of a bare kind uses the kind": {
			steps: []step{ev(paddock.Failed(paddock.ErrDenied))},
			want:  []string{"1 error denied after 0"},
		},
		"an error event outside the taxonomy": {
			steps: []step{ev(paddock.Failed(errors.New("odd")))},
			want:  []string{"1 error error after 0"},
		},
		"an event of unknown kind breaks the stream": {
			steps: []step{ev(paddock.Event{Kind: 42})},
			want:  []string{"1 error closed_before_exit after 0"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var violations []string
			g := supervisor.NewGuard("r1", func(v supervisor.Violation) {
				assert.Equal(t, "r1", v.Ref)
				violations = append(violations, v.What+" "+v.Kind)
			})
			var got []string
			for _, s := range tc.steps {
				var f messages.Frame
				if s.ev != nil {
					f = g.Event(*s.ev)
				} else {
					f = g.End(s.end)
				}
				if f != nil {
					assert.Equal(t, "r1", f.GetRef())
					got = append(got, render(f))
				}
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.violations, violations)
			assert.True(t, g.Done(), "every sequence here ends with one terminal frame")
		})
	}
}

func TestGuardFail(t *testing.T) {
	t.Parallel()
	g := supervisor.NewGuard("r", nil)
	require.NotNil(t, g.Event(paddock.Stdout([]byte("x"))))
	f := g.Fail(supervisor.ReasonAdapterPanic, "boom", messages.ErrorKind_ERROR_KIND_UNAVAILABLE)
	require.Equal(t, "2 error adapter_panic after 1", render(f))
	assert.Nil(t, g.Fail(supervisor.ReasonStoppedBeforeExit, "", messages.ErrorKind_ERROR_KIND_UNAVAILABLE), "one terminal only")
	assert.Nil(t, g.End(io.EOF), "an end after the terminal is normal")
	assert.Equal(t, uint64(1), g.Outputs())
}
