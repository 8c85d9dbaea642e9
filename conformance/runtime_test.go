package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The load case through the runtime hands its turns' streams to channel
// owners and actor owners in turn, and each kind reads its command whole.
func TestTheLoadCaseMixesBothKindsOfOwner(t *testing.T) {
	t.Parallel()
	a := fake.New()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: a}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		a.Reset()
	})
	view := rt.Adapter(paddock.ProviderFake)
	mixed := &mixedOwners{Client: view, owned: client.New(actorOwners{Transport: rt.Transport(), rt: rt}, paddock.ProviderFake)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := view.Create(ctx, "mixed", paddock.CreateOpts{})
	require.NoError(t, err)
	bulk := FakeFixtures().SpawnBulk
	actorOwnedStreams := 0
	for range 4 {
		st, err := mixed.Spawn(ctx, h, bulk.Cmd, paddock.SpawnOpts{})
		require.NoError(t, err)
		if _, ok := st.(*ownedStream); ok {
			actorOwnedStreams++
		}
		require.NoError(t, readWhole(ctx, st, bulk.Output))
		require.NoError(t, st.Close())
	}
	assert.Equal(t, 2, actorOwnedStreams, "every other stream is an actor's")
}
