package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/require"
)

// Each tenant sees only the sandboxes it created: its names are its own
// (two tenants may both have "box"), prefixed at the provider; another's
// sandbox is not found, not listed, and its commands cannot be written
// to; a token without a tenant sees every sandbox under its own name.
func TestTenantsSeeOnlyTheirOwn(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	hs := serveGuarded(t, a,
		daemon.Token{Tenant: "acme", Secret: paddock.NewSecret("acme-token")},
		daemon.Token{Tenant: "globex", Secret: paddock.NewSecret("globex-token")},
		daemon.Token{Secret: paddock.NewSecret("operator-token")})
	as := func(token string) (*client.Client, *daemon.Transport) {
		tr, err := daemon.Dial(hs.URL, daemon.DialOptions{HTTPClient: hs.Client(), Token: paddock.NewSecret(token)})
		require.NoError(t, err)
		return client.New(tr, paddock.ProviderFake), tr
	}
	acme, acmeT := as("acme-token")
	globex, globexT := as("globex-token")
	operator, _ := as("operator-token")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	h, err := acme.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.Equal(t, "box", h.Name, "the tenant's own name")
	info, err := acme.Get(ctx, h)
	require.NoError(t, err)
	require.Equal(t, "box", info.Name)
	_, err = globex.Get(ctx, globex.BuildHandle("box"))
	require.ErrorIs(t, err, paddock.ErrNotFound, "another tenant's sandbox is not found")
	names, err := globex.ListAllNames(ctx)
	require.NoError(t, err)
	require.Empty(t, names, "nor listed")
	_, err = globex.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err, "a tenant's names are its own")
	names, err = acme.ListAllNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"box"}, names)
	all, err := operator.ListAllNames(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"acme-box", "globex-box"}, all, "at the provider, each under its tenant's prefix")

	// A command of acme's, opened on acme's transport: globex cannot write
	// to it (as for a command that exited), acme can.
	st, r, err := acmeT.Open(ctx, wire.SpawnRequestMessage(h, paddock.NewCmd("script", "stay"), paddock.SpawnOpts{}))
	require.NoError(t, err)
	require.Nil(t, r.GetFailure())
	defer st.Close()
	ref := r.(*messages.SpawnReply).GetCommand()
	theirs := client.Controls{T: globexT, Ref: func(context.Context) (*messages.CommandRef, error) { return ref, nil }}
	require.ErrorIs(t, theirs.WriteStdin(ctx, []byte("not yours\n")), paddock.ErrCommandExited)
	require.ErrorIs(t, theirs.Signal(ctx, paddock.SignalKill), paddock.ErrCommandExited)
	require.NoError(t, theirs.Stop(ctx), "a stop succeeds for any command, and does nothing to another's")
	require.NoError(t, st.WriteStdin(ctx, []byte("mine\n")))
	ev, err := st.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "echo:mine\n", string(ev.Data), "the command is acme's and lives on")
}
