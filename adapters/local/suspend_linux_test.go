package local_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSuspendStopsEveryProcess(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			a := newLocal(t, opt)
			h := box(t, a, "sleepy")
			// Each tick is printed, then counted in a file (renamed into
			// place, never half written): a process stopped between the two
			// has printed at most one tick past the count.
			count := paddock.HostPath(a, h, "/count")
			st := sh(t, a, h, fmt.Sprintf(`i=0; while :; do i=$((i+1)); echo tick $i; echo $i > %[1]q.tmp; mv %[1]q.tmp %[1]q; sleep 0.02; done`, count), paddock.SpawnOpts{})
			next(t, st)
			require.NoError(t, a.Suspend(ctx, h))
			info, err := a.Get(ctx, h)
			require.NoError(t, err)
			assert.Equal(t, paddock.StatusSuspended, info.Status)
			require.Eventually(t, func() bool { return a.AllStopped(h, st.SessionID()) }, time.Minute, time.Millisecond,
				"every process of the sandbox is stopped")
			stoppedAt := 0 // stopped before the first count was written
			if b, err := os.ReadFile(count); err == nil {
				stoppedAt, err = strconv.Atoi(strings.TrimSpace(string(b)))
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, os.ErrNotExist)
			}
			// Whatever arrives now, however late the machine delivers it,
			// was printed before the stop: no tick past the count plus one.
			last := 0
			for end := time.Now().Add(time.Second); time.Now().Before(end); {
				c, cancel := contextTimeout(100 * time.Millisecond)
				ev, err := st.Next(c)
				cancel()
				if err == nil {
					last = max(last, lastTick(t, ev.Data))
				}
			}
			require.LessOrEqual(t, last, stoppedAt+1, "no output while stopped (stopped at tick %d)", stoppedAt)

			_, err = a.Resume(ctx, h)
			require.NoError(t, err)
			info, err = a.Get(ctx, h)
			require.NoError(t, err)
			assert.Equal(t, paddock.StatusRunning, info.Status)
			for after := 0; after <= stoppedAt+1; {
				after = max(after, lastTick(t, next(t, st).Data))
			}
		})
	}
}
