package e2b_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A TTY spawn runs on an 80x24 terminal (envd's pty start): the command
// sees a terminal, typed input is echoed, CloseStdin types ^D, and the
// exit code comes back. A detachable spawn cannot have one (its journal
// is pipes).
func TestTTYSpawn(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.True(t, a.Capabilities().Has(paddock.CapTTY))

	script := `test -t 0 && test -t 1 && echo "tty $(stty size)"; read line; echo "got $line"; cat; exit 7`
	st, err := a.Spawn(ctxFor(t, 30*time.Second), h, paddock.NewCmd("sh", "-c", script), paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.WriteStdin(ctx, []byte("hello\n")))
	require.NoError(t, st.CloseStdin(ctx), "^D ends cat")
	var out strings.Builder
	for {
		ev, err := st.Next(ctxFor(t, 30*time.Second))
		require.NoError(t, err)
		require.NotEqual(t, paddock.EventStderr, ev.Kind, "a terminal has no separate stderr")
		if ev.Kind == paddock.EventStdout {
			out.WriteString(string(ev.Data))
			continue
		}
		require.Equal(t, paddock.EventExit, ev.Kind, "%v", ev.Err)
		assert.Equal(t, 7, ev.Code)
		break
	}
	assert.Contains(t, out.String(), "tty 24 80\r\n", "the command runs on an 80x24 terminal")
	assert.Contains(t, out.String(), "got hello\r\n", "input is typed into the terminal")

	var start struct {
		Pty json.RawMessage `json:"pty"`
	}
	for _, r := range srv.Requests() {
		if r.Route == startRoute {
			require.NoError(t, json.Unmarshal([]byte(r.Body[5:]), &start)) // past the envelope's head
		}
	}
	assert.JSONEq(t, `{"size":{"cols":80,"rows":24}}`, string(start.Pty))

	_, err = a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{TTY: true, Detachable: true})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}
