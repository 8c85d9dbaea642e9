package paddock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// overTheWire encodes err, marshals and unmarshals the failure, and decodes it.
func overTheWire(t *testing.T, err error) error {
	t.Helper()
	b, merr := proto.Marshal(paddock.FailureOf(err))
	require.NoError(t, merr)
	var f messages.Failure
	require.NoError(t, proto.Unmarshal(b, &f))
	return paddock.ErrorOf(&f)
}

func TestFailureRoundTripKeepsKindAndData(t *testing.T) {
	for _, c := range kindCases() {
		for how, err := range map[string]error{
			"bare":    c.err,
			"wrapped": &paddock.OpError{Op: "exec", Provider: "fake", Name: "box", Err: c.err},
		} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				back := overTheWire(t, err)
				require.Error(t, back)
				assert.Equal(t, c.kind, paddock.KindOf(back))
				assert.ErrorIs(t, back, c.sentinel)
				assert.Equal(t, paddock.IsTransient(err), paddock.IsTransient(back))
				assert.Equal(t, err.Error(), back.Error(), "the message reads the same on both sides")
			})
		}
	}
}

func TestFailureRoundTripTypedData(t *testing.T) {
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
	assert.Nil(t, paddock.FailureOf(nil))
	assert.NoError(t, paddock.ErrorOf(nil))
	assert.NoError(t, paddock.ErrorOf(&messages.Failure{}))

	assert.ErrorIs(t, overTheWire(t, paddock.ErrNoPublicURL), paddock.ErrNoPublicURL)

	var up *paddock.UnknownProviderError
	require.ErrorAs(t, overTheWire(t, &paddock.UnknownProviderError{Provider: "x", Configured: []paddock.Provider{"a", "b"}}), &up)
	assert.Equal(t, paddock.Provider("x"), up.Provider)
	assert.Equal(t, []paddock.Provider{"a", "b"}, up.Configured)

	back := overTheWire(t, context.DeadlineExceeded)
	assert.Equal(t, "context deadline exceeded", back.Error())
	assert.True(t, paddock.IsTransient(back), "an error outside the taxonomy stays transient")
	assert.Equal(t, messages.ErrorKind_ERROR_KIND_OTHER, paddock.FailureOf(errors.New("x")).GetKind())
}

func TestKindCodes(t *testing.T) {
	seen := map[messages.ErrorKind]bool{}
	for _, k := range paddock.Kinds() {
		code := paddock.KindCode(k)
		assert.False(t, seen[code], "codes are distinct")
		seen[code] = true
		assert.Equal(t, k, paddock.KindFromCode(code))
	}
	assert.Equal(t, messages.ErrorKind_ERROR_KIND_OTHER, paddock.KindCode("bogus"))
	assert.Equal(t, paddock.Kind(""), paddock.KindFromCode(messages.ErrorKind_ERROR_KIND_UNSUPPORTED))
}

func TestValueConversions(t *testing.T) {
	h := paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-9", Private: "dropped"}
	assert.Equal(t, paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-9"},
		paddock.HandleFromMessage(paddock.HandleMessage(h)))

	c := paddock.Subscription{Provider: "fake", Ref: "r-1", Private: "dropped"}
	assert.Equal(t, paddock.Subscription{Provider: "fake", Ref: "r-1"}, paddock.CommandFromMessage(paddock.CommandMessage(c)))

	cmd := paddock.Cmd{Path: "sh", Args: []string{"-c", "x"}, Env: []paddock.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}}, Dir: "/w"}
	assert.Equal(t, cmd, paddock.CmdFromMessage(paddock.CmdMessage(cmd)), "env order survives")

	now := time.Unix(1_700_000_000, 123).UTC()
	s := paddock.Session{ID: "s-1", Name: "dev", Command: "sh -c x", CreatedAt: now, LastActivityAt: now.Add(time.Second), TTY: true}
	assert.Equal(t, s, paddock.SessionFromMessage(paddock.SessionMessage(s)))
	assert.Equal(t, paddock.Session{ID: "s"}, paddock.SessionFromMessage(paddock.SessionMessage(paddock.Session{ID: "s"})), "zero times stay zero")

	cp := paddock.Checkpoint{ID: "cp", Comment: "c", CreatedAt: now}
	assert.Equal(t, cp, paddock.CheckpointFromMessage(paddock.CheckpointMessage(cp)))

	for _, st := range []paddock.Status{paddock.StatusRunning, paddock.StatusSuspended, paddock.StatusUnknown} {
		info := paddock.Info{Status: st, Raw: []byte(`{"a":1}`)}
		assert.Equal(t, info, paddock.InfoFromMessage(paddock.InfoMessage(info)))
	}
	assert.Equal(t, paddock.StatusUnknown, paddock.InfoFromMessage(&messages.Info{}).Status)

	p := paddock.Preview{URL: "https://p/", Port: 80, Token: paddock.NewSecret("t"), ExpiresAt: now}
	back := paddock.PreviewFromMessage(paddock.PreviewMessage(p))
	assert.Equal(t, "t", back.Token.Reveal())
	assert.Equal(t, p.URL, back.URL)
	assert.True(t, p.ExpiresAt.Equal(back.ExpiresAt))

	for _, m := range []paddock.TerminateMode{"", paddock.TerminateGraceful, paddock.TerminateForce} {
		assert.Equal(t, m, paddock.TerminateModeFromMessage(paddock.TerminateModeMessage(m)))
	}
	assert.Nil(t, paddock.DurationFromMessage(paddock.DurationMessage(nil)), "absent stays absent")
	assert.Equal(t, time.Duration(0), *paddock.DurationFromMessage(paddock.DurationMessage(paddock.Duration(0))), "explicit zero stays explicit")
	assert.Equal(t, 0o644, int(paddock.FileModeFromMessage(0o100644)))
}
