//go:build unix

package local_test

import (
	"crypto/sha256"
	"io"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/heavy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gigabyteLines is how many numbered lines seq prints for just over 1 GiB.
const gigabyteLines = 118485293

// TestVolumeGigabyteThroughSpawn streams 1 GiB of numbered lines through a
// session (journal written, then read back) and compares it, byte for
// byte by hash, with the same command read directly. Built with the race
// detector it streams an eighth of that (heavy.Volume).
func TestVolumeGigabyteThroughSpawn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	heavy.Lock(t)
	lines := strconv.Itoa(heavy.Volume(gigabyteLines))
	direct := sha256.New()
	cmd := exec.Command("seq", "1", lines)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	wantBytes, err := io.Copy(direct, out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	if !heavy.Race {
		require.GreaterOrEqual(t, wantBytes, int64(1<<30), "just over 1 GiB")
	}

	a := newLocal(t, withSessionOutputLimit(2<<30)) // over the default cap
	h := box(t, a, "big")
	start := time.Now()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("seq", "1", lines), paddock.SpawnOpts{})
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
	t.Logf("through Spawn: %d bytes in %s (%.0f MB/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds()/(1<<20))
	assert.Equal(t, wantBytes, n, "complete")
	assert.Equal(t, direct.Sum(nil), got.Sum(nil), "in order, byte for byte")
}
