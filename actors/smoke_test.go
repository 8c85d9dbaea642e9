package actors_test

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:hi", "err:x", "exit:3"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "hi", string(res.Stdout))
	assert.Equal(t, 3, res.ExitCode)

	s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	f := frame(t, s)
	require.IsType(t, &messages.Stdout{}, f)
	require.NoError(t, s.WriteStdin(ctx, []byte("ping")))
	assert.Equal(t, "echo:ping", string(frame(t, s).(*messages.Stdout).Data))
	require.NoError(t, s.CloseStdin(ctx))
	fs := all(t, s)
	require.Len(t, fs, 1)
	assert.Equal(t, int32(0), fs[0].(*messages.Exit).Code)
	assert.Equal(t, uint64(3), fs[0].GetSeq())
}
