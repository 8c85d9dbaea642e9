package docker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// A restore stops a command on a terminal too, and its subscriber learns
// why (not the kill's exit), as a journaled session's does.
func TestARestoreEndsATerminalSessionSayingWhy(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "restore-tty", nil)
	ctx := ctxFor(t, 2*time.Minute)
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo ready; sleep 600"), paddock.SpawnOpts{TTY: true})
	require.NoError(t, err)
	defer st.Close()
	var out strings.Builder
	for !strings.Contains(out.String(), "ready") {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, paddock.EventStdout, ev.Kind, "before the restore: %v", ev)
		out.Write(ev.Data)
	}

	require.NoError(t, paddock.RestoreCheckpoint(ctx, a, h, cp))
	for {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		if ev.Kind.Terminal() {
			require.Equal(t, paddock.EventError, ev.Kind, "%v", ev)
			require.ErrorIs(t, ev.Err, &paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored})
			return
		}
	}
}
