package fake_test

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fake registered under each hosted provider's slot: every call
// dispatches through the registry on the tag the caller passes
// (docs/contract.md#registry). The runtime's facade repeats this test through its own
// dispatch.
func TestFakeUnderHostedProviderSlots(t *testing.T) {
	t.Parallel()
	for _, p := range []paddock.Provider{paddock.ProviderSprites, paddock.ProviderE2B, paddock.ProviderDaytona} {
		t.Run(string(p), func(t *testing.T) {
			f := fake.New()
			t.Cleanup(f.Reset)
			reg := paddock.Registry{p: f}
			dispatch := func(tag paddock.Provider) paddock.Adapter {
				a, err := reg.Lookup(tag)
				require.NoError(t, err)
				return a
			}

			h, err := dispatch(p).Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			assert.Equal(t, paddock.ProviderFake, h.Provider, "the fake tags its own handles")
			h.Provider = p // the caller re-tags; dispatch follows the tag

			res, err := dispatch(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:out", "err:err", "exit:4"), paddock.ExecOpts{StderrToStdout: true})
			require.NoError(t, err)
			assert.Equal(t, "outerr", string(res.Stdout))
			assert.Equal(t, 4, res.ExitCode)

			st, err := dispatch(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			require.NoError(t, st.WriteStdin(ctx, []byte("in"+"put")))
			assert.Equal(t, []string{"stdout:echo:input"}, text([]paddock.Event{next(t, st)}))
			require.NoError(t, st.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, text(drain(t, st)))

			runner, err := dispatch(h.Provider).Spawn(ctx, h, paddock.NewCmd("runner", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = runner.Close() })
			sessions, err := dispatch(h.Provider).ListSessions(ctx, h)
			require.NoError(t, err)
			var id string
			for _, s := range sessions {
				if s.Command == "runner stay" {
					id = s.ID
				}
			}
			require.NotEmpty(t, id, "the session is found by its command line")
			att, err := dispatch(h.Provider).Attach(ctx, h, id, paddock.AttachOpts{Stdin: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = att.Close() })
			require.NoError(t, runner.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, text(drain(t, runner)))
			assert.Equal(t, []string{"exit:0"}, text(drain(t, att)), "both subscriptions get the exit")

			_, err = paddock.CreateCheckpoint(ctx, dispatch(h.Provider), h, paddock.CheckpointOpts{})
			require.ErrorIs(t, err, paddock.ErrNotSupported)
			require.ErrorIs(t, paddock.RestoreCheckpoint(ctx, dispatch(h.Provider), h, "cp"), paddock.ErrNotSupported)
			assert.Equal(t, "/w/x", paddock.HostPath(dispatch(h.Provider), h, "/w/x"), "HostPath is the identity")

			require.NoError(t, dispatch(h.Provider).Destroy(ctx, h))
			_, err = dispatch(h.Provider).Get(ctx, h)
			require.ErrorIs(t, err, paddock.ErrNotFound)

			var unknown *paddock.UnknownProviderError
			_, err = reg.Lookup("nope")
			require.ErrorAs(t, err, &unknown, "an unknown tag fails loudly")
			assert.Equal(t, []paddock.Provider{p}, unknown.Configured)
		})
	}
}
