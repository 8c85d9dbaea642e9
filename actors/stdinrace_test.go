package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/require"
)

// eofExits is a fake whose "cat" stream exits once its stdin is closed,
// while the close itself, like a request still in flight, only returns
// when the runtime cancels it.
type eofExits struct{ *fake.Adapter }

type eofStream struct{ closed chan struct{} }

func (a eofExits) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	if cmd.Path != "cat" {
		return a.Adapter.Spawn(ctx, h, cmd, o)
	}
	return &eofStream{closed: make(chan struct{})}, nil
}

func (s *eofStream) Next(ctx context.Context) (paddock.Event, error) {
	select {
	case <-s.closed:
		return paddock.Exit(0), nil
	case <-ctx.Done():
		return paddock.Event{}, ctx.Err()
	}
}

func (s *eofStream) CloseStdin(ctx context.Context) error {
	close(s.closed) // the command sees EOF and exits...
	<-ctx.Done()    // ...before the close's answer arrives
	return ctx.Err()
}
func (s *eofStream) WriteStdin(context.Context, []byte) error { return nil }
func (s *eofStream) Close() error                             { return nil }
func (s *eofStream) SessionID() string                        { return "" }

// A CloseStdin the command's exit cut short succeeds: closing the stdin of
// an exited command is fine.
func TestCloseStdinRacingTheExitSucceeds(t *testing.T) {
	t.Parallel()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": eofExits{fake.New()}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := spawn(rt, ctx, h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, s.CloseStdin(cctx))
	for range s.C() {
	}
}
