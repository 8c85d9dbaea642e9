package actors_test

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The facade tests of the reference fake (docs/contract.md#fake): the fake registered under each hosted
// provider's slot, every call dispatched on the tag the caller passes.
func TestFacadeDispatchesOnTheTag(t *testing.T) {
	t.Parallel()
	for _, p := range []paddock.Provider{paddock.ProviderSprites, paddock.ProviderE2B, paddock.ProviderDaytona} {
		t.Run(string(p), func(t *testing.T) {
			f := fake.New()
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{p: f}})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)); f.Reset() })

			h, err := rt.Adapter(p).Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			assert.Equal(t, paddock.ProviderFake, h.Provider, "the fake tags its own handles")
			_, err = rt.Adapter(h.Provider).Get(ctx, h)
			var unknown *paddock.UnknownProviderError
			require.ErrorAs(t, err, &unknown, "the fake tag is not registered here")
			h.Provider = p

			res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:out", "err:err", "exit:4"), paddock.ExecOpts{StderrToStdout: true})
			require.NoError(t, err)
			assert.Equal(t, "outerr", string(res.Stdout))
			assert.Equal(t, 4, res.ExitCode)

			s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			assert.Equal(t, p, s.Subscription().Provider, "commands carry the caller's tag")
			require.NoError(t, s.WriteStdin(ctx, []byte("in"+"put")))
			assert.Equal(t, "echo:input", string(frame(t, s).(*messages.Stdout).GetData()))
			require.NoError(t, s.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, terminals(all(t, s)))

			runner, err := spawn(rt, ctx, h, paddock.NewCmd("runner", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			sessions, err := rt.Adapter(h.Provider).ListSessions(ctx, h)
			require.NoError(t, err)
			var id string
			for _, sess := range sessions {
				if sess.Command == "runner stay" {
					id = sess.ID
				}
			}
			require.NotEmpty(t, id, "found by its command line")
			att, err := attach(rt, ctx, h, id, paddock.AttachOpts{Stdin: true})
			require.NoError(t, err)
			assert.NotEqual(t, runner.Subscription().Ref, att.Subscription().Ref)
			require.NoError(t, runner.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, terminals(all(t, runner)))
			assert.Equal(t, []string{"exit:0"}, terminals(all(t, att)), "both refs get the exit")

			_, err = rt.Adapter(h.Provider).CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			require.ErrorIs(t, err, paddock.ErrNotSupported)
			require.ErrorIs(t, rt.Adapter(h.Provider).RestoreCheckpoint(ctx, h, "cp"), paddock.ErrNotSupported)
			assert.Equal(t, "/w/x", paddock.HostPath(rt.Adapter(h.Provider), h, "/w/x"))

			require.NoError(t, rt.Adapter(h.Provider).Destroy(ctx, h))
			_, err = rt.Adapter(h.Provider).Get(ctx, h)
			require.ErrorIs(t, err, paddock.ErrNotFound)
		})
	}
}

func terminals(fs []messages.Frame) []string {
	var out []string
	for _, f := range fs {
		if messages.IsTerminal(f) {
			out = append(out, terminalText(f))
		}
	}
	return out
}
