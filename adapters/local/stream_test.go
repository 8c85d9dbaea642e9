package local_test

import (
	"crypto/sha256"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gigabyteSeq makes seq print just over 1 GiB of numbered lines.
const gigabyteSeq = "118485293"

// TestGigabyteThroughSpawn streams 1 GiB of numbered lines through a
// session (journal written, then read back) and compares it, byte for
// byte by hash, with the same command read directly.
func TestGigabyteThroughSpawn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	direct := sha256.New()
	cmd := exec.Command("seq", "1", gigabyteSeq)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	wantBytes, err := io.Copy(direct, out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	require.GreaterOrEqual(t, wantBytes, int64(1<<30))

	a := newLocal(t, local.WithSessionOutputLimit(2<<30)) // over the default cap
	h := box(t, a, "big")
	start := time.Now()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("seq", "1", gigabyteSeq), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer st.Close()
	got := sha256.New()
	var n int64
	for {
		ev := next(t, st)
		if ev.Kind == paddock.EventStdout {
			got.Write(ev.Data)
			n += int64(len(ev.Data))
			continue
		}
		require.Equal(t, paddock.EventExit, ev.Kind, "no stderr, then the exit: %v", ev.Err)
		require.Equal(t, 0, ev.Code)
		break
	}
	t.Logf("1 GiB through Spawn: %d bytes in %s (%.0f MB/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds()/(1<<20))
	assert.Equal(t, wantBytes, n, "complete")
	assert.Equal(t, direct.Sum(nil), got.Sum(nil), "in order, byte for byte")
}
