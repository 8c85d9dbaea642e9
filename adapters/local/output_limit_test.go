//go:build unix

package local_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that prints without end stops growing its journal at the cap;
// the live subscriber and a later attacher both get the output up to the
// cap and then session_output_limit, never an exit.
func TestTheJournalStopsAtItsCap(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt, withSessionOutputLimit(limit))
			h := box(t, a, "chatty")
			st := sh(t, a, h, "yes", paddock.SpawnOpts{})
			live := events(t, st, time.Minute)
			got := len(stdout(live))
			last := live[len(live)-1]
			require.Equal(t, paddock.EventError, last.Kind, "terminal %s", terminal(live))
			require.ErrorIs(t, last.Err, paddock.ErrSessionOutputLimit)
			assert.False(t, paddock.IsTransient(last.Err))
			assert.LessOrEqual(t, got, limit)
			assert.Greater(t, got, limit-64<<10, "output is kept up to the cap")

			journal := filepath.Join(a.Root(), "chatty", "sessions", st.SessionID(), "journal")
			info, err := os.Stat(journal)
			require.NoError(t, err)
			// The cap counts output; each record adds a 5-byte header.
			assert.LessOrEqual(t, info.Size(), int64(limit+16<<10), "the journal stops at the cap")

			again, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = again.Close() })
			replay := events(t, again, time.Minute)
			assert.Equal(t, got, len(stdout(replay)), "an attacher gets the same output")
			require.ErrorIs(t, replay[len(replay)-1].Err, paddock.ErrSessionOutputLimit, "and the same end")

			res, err := a.Exec(ctx, h, paddock.NewCmd("echo", "still usable"), paddock.ExecOpts{})
			require.NoError(t, err)
			assert.Equal(t, "still usable\n", string(res.Stdout))
		})
	}
}

// Through the runtime the owner gets the limit as a typed error frame.
func TestTheJournalCapReachesTheOwner(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone), withSessionOutputLimit(256<<10))
	rt := startRuntime(t, a)
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "chatty", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("yes"), paddock.SpawnOpts{})
	require.NoError(t, err)
	var last any
	for f := range s.(*actors.FrameStream).C() {
		last = f
	}
	frame, ok := last.(*messages.Error)
	require.True(t, ok, "the terminal frame is an error: %T", last)
	assert.Equal(t, messages.ErrorKind_ERROR_KIND_INVALID, frame.GetKind())
	assert.Equal(t, paddock.DetailSessionOutputLimit, frame.GetReason())
}
