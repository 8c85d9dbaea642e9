package wire_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/kindcases"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// overTheWire encodes err, marshals and unmarshals the failure, and decodes it.
func overTheWire(t *testing.T, err error) error {
	t.Helper()
	b, merr := proto.Marshal(wire.FailureOf(err))
	require.NoError(t, merr)
	var f messages.Failure
	require.NoError(t, proto.Unmarshal(b, &f))
	return wire.ErrorOf(&f)
}

func TestFailureRoundTripKeepsKindAndData(t *testing.T) {
	t.Parallel()
	for _, c := range kindcases.All() {
		for how, err := range map[string]error{
			"bare":    c.Err,
			"wrapped": &paddock.OpError{Op: "exec", Provider: "fake", Name: "box", Err: c.Err},
		} {
			t.Run(c.Name+"/"+how, func(t *testing.T) {
				back := overTheWire(t, err)
				require.Error(t, back)
				assert.Equal(t, c.Kind, paddock.KindOf(back))
				assert.ErrorIs(t, back, c.Sentinel)
				assert.Equal(t, paddock.IsTransient(err), paddock.IsTransient(back))
				assert.Equal(t, err.Error(), back.Error(), "the message reads the same on both sides")
			})
		}
	}
}

func TestFailureRoundTripTypedData(t *testing.T) {
	t.Parallel()
	retry := 1500 * time.Millisecond
	var rl *paddock.RateLimitedError
	require.ErrorAs(t, overTheWire(t, &paddock.RateLimitedError{RetryAfter: &retry}), &rl)
	require.NotNil(t, rl.RetryAfter)
	assert.Equal(t, retry, *rl.RetryAfter)
	require.ErrorAs(t, overTheWire(t, &paddock.RateLimitedError{}), &rl)
	assert.Nil(t, rl.RetryAfter, "an absent hint stays absent")

	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, overTheWire(t, fmt.Errorf("x: %w", &paddock.ExecTimeoutError{Timeout: 1234 * time.Millisecond})), &et)
	assert.Equal(t, 1234*time.Millisecond, et.Timeout)

	back := overTheWire(t, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit})
	assert.ErrorIs(t, back, paddock.ErrClosedBeforeExit)

	var denied *paddock.DeniedError
	require.ErrorAs(t, overTheWire(t, &paddock.DeniedError{Detail: "token", Status: 401}), &denied)
	assert.Equal(t, 401, denied.Status)

	var pe *paddock.ProviderError
	require.ErrorAs(t, overTheWire(t, &paddock.ProviderError{Provider: "daytona", Detail: "odd"}), &pe)
	assert.Equal(t, paddock.Provider("daytona"), pe.Provider)

	var op *paddock.OpError
	require.ErrorAs(t, overTheWire(t, &paddock.OpError{Op: "destroy", Provider: "e2b", Name: "box", Err: paddock.ErrNotFound}), &op)
	assert.Equal(t, "destroy", op.Op)
	assert.Equal(t, paddock.Provider("e2b"), op.Provider)
	assert.Equal(t, "box", op.Name)
}

func TestFailureOutsideTheTaxonomy(t *testing.T) {
	t.Parallel()
	assert.Nil(t, wire.FailureOf(nil))
	assert.NoError(t, wire.ErrorOf(nil))
	assert.NoError(t, wire.ErrorOf(&messages.Failure{}))

	assert.ErrorIs(t, overTheWire(t, paddock.ErrNoPublicURL), paddock.ErrNoPublicURL)

	var up *paddock.UnknownProviderError
	require.ErrorAs(t, overTheWire(t, &paddock.UnknownProviderError{Provider: "x", Configured: []paddock.Provider{"a", "b"}}), &up)
	assert.Equal(t, paddock.Provider("x"), up.Provider)
	assert.Equal(t, []paddock.Provider{"a", "b"}, up.Configured)

	back := overTheWire(t, context.DeadlineExceeded)
	assert.Equal(t, "context deadline exceeded", back.Error())
	assert.True(t, paddock.IsTransient(back), "an error outside the taxonomy stays transient")
	assert.Equal(t, messages.ErrorKind_ERROR_KIND_OTHER, wire.FailureOf(errors.New("x")).GetKind())
}

func TestKindCodes(t *testing.T) {
	t.Parallel()
	seen := map[messages.ErrorKind]bool{}
	for _, k := range paddock.Kinds() {
		code := wire.KindCode(k)
		assert.False(t, seen[code], "codes are distinct")
		seen[code] = true
		assert.Equal(t, k, wire.KindFromCode(code))
	}
	assert.Equal(t, messages.ErrorKind_ERROR_KIND_OTHER, wire.KindCode("bogus"))
	assert.Equal(t, paddock.Kind(""), wire.KindFromCode(messages.ErrorKind_ERROR_KIND_NO_PUBLIC_URL))
}

func TestValueConversions(t *testing.T) {
	t.Parallel()
	h := paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-9", Private: "dropped"}
	assert.Equal(t, paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-9"},
		wire.HandleFromMessage(wire.HandleMessage(h)))

	c := paddock.Subscription{Provider: "fake", Ref: "r-1", Private: "dropped"}
	assert.Equal(t, paddock.Subscription{Provider: "fake", Ref: "r-1"}, wire.CommandFromMessage(wire.CommandMessage(c)))

	cmd := paddock.Cmd{Path: "sh", Args: []string{"-c", "x"}, Env: []paddock.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}}, Dir: "/w"}
	assert.Equal(t, cmd, wire.CmdFromMessage(wire.CmdMessage(cmd)), "env order survives")

	now := time.Unix(1_700_000_000, 123).UTC()
	s := paddock.Session{ID: "s-1", Name: "dev", Command: "sh -c x", CreatedAt: now, LastActivityAt: now.Add(time.Second), TTY: true}
	assert.Equal(t, s, wire.SessionFromMessage(wire.SessionMessage(s)))
	assert.Equal(t, paddock.Session{ID: "s"}, wire.SessionFromMessage(wire.SessionMessage(paddock.Session{ID: "s"})), "zero times stay zero")
	for _, end := range []paddock.Event{paddock.Exit(0), paddock.Exit(3), paddock.Failed(paddock.ErrClosedBeforeExit)} {
		s := paddock.Session{ID: "s"}
		s.Ended(end)
		assert.Equal(t, s, wire.SessionFromMessage(wire.SessionMessage(s)), "the end %v crosses the wire", end)
	}
	running := paddock.Session{ID: "s", State: paddock.SessionRunning}
	assert.Equal(t, running, wire.SessionFromMessage(wire.SessionMessage(running)))

	cp := paddock.Checkpoint{ID: "cp", Comment: "c", CreatedAt: now, Memory: true, Size: 1 << 40}
	assert.Equal(t, cp, wire.CheckpointFromMessage(wire.CheckpointMessage(cp)))

	for _, st := range []paddock.Status{paddock.StatusRunning, paddock.StatusSuspended, paddock.StatusUnknown} {
		info := paddock.Info{Name: "box", ID: "c-1", Image: "img:1", Status: st, CreatedAt: now, Raw: []byte(`{"a":1}`)}
		assert.Equal(t, info, wire.InfoFromMessage(wire.InfoMessage(info)))
	}
	assert.Equal(t, paddock.Info{Name: "box", Status: paddock.StatusRunning},
		wire.InfoFromMessage(wire.InfoMessage(paddock.Info{Name: "box", Status: paddock.StatusRunning})), "empty fields stay empty")
	assert.Equal(t, paddock.StatusUnknown, wire.InfoFromMessage(&messages.Info{}).Status)

	p := paddock.Preview{URL: "https://p/", Port: 80, Token: paddock.NewSecret("t"), ExpiresAt: now}
	back := wire.PreviewFromMessage(wire.PreviewMessage(p))
	assert.Equal(t, "t", back.Token.Reveal())
	assert.Equal(t, p.URL, back.URL)
	assert.True(t, p.ExpiresAt.Equal(back.ExpiresAt))

	_, err := paddock.ValidateTermination("s-1", paddock.TerminateOpts{Mode: wire.TerminateModeFromMessage(messages.TerminateMode(99))})
	assert.ErrorIs(t, err, paddock.ErrTerminationRequest, "a mode this side does not know is refused, never read as graceful")
	for _, m := range []paddock.TerminateMode{"", paddock.TerminateGraceful, paddock.TerminateForce} {
		assert.Equal(t, m, wire.TerminateModeFromMessage(wire.TerminateModeMessage(m)))
	}
	assert.Nil(t, wire.DurationFromMessage(wire.DurationMessage(nil)), "absent stays absent")
	assert.Equal(t, time.Duration(0), *wire.DurationFromMessage(wire.DurationMessage(paddock.Duration(0))), "explicit zero stays explicit")
	assert.Equal(t, 0o644, int(wire.FileModeFromMessage(0o100644)))
}

func TestExecRoundTrip(t *testing.T) {
	t.Parallel()
	h := paddock.Handle{Provider: "fake", Name: "box"}
	cmd := paddock.NewCmd("sh", "-c", "true")
	for name, opts := range map[string]paddock.ExecOpts{
		"zero":  {},
		"every": {Timeout: paddock.Duration(time.Second), StderrToStdout: true, MaxOutput: 7},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := wire.ExecRequestMessage("id", h, cmd, opts)
			assert.Equal(t, opts, wire.ExecOptsFromMessage(m))
		})
	}
	for name, res := range map[string]paddock.ExecResult{
		"zero":  {},
		"every": {Stdout: []byte("out"), Stderr: []byte("err"), ExitCode: -3, Timeout: paddock.Duration(time.Minute)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, res, wire.ExecResultFromMessage(wire.ExecReplyMessage("id", res)))
		})
	}
}
