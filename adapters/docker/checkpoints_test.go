package docker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/stretchr/testify/require"
)

// A restore stops a command on a terminal too, and its subscriber learns
// why (not the kill's exit), as a journaled session's does.
func TestARestoreEndsATerminalSessionSayingWhy(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "restore-tty", nil)
	ctx := ctxFor(t, 2*time.Minute)
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo ready; sleep 600"), paddock.SpawnOpts{TTY: true})
	require.NoError(t, err)
	defer st.Close()
	var out strings.Builder
	for !strings.Contains(out.String(), "ready") {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, paddock.EventStdout, ev.Kind, "before the restore: %v", ev)
		out.Write(ev.Data)
	}

	require.NoError(t, paddock.RestoreCheckpoint(ctx, a, h, cp))
	for {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		if ev.Kind.Terminal() {
			require.Equal(t, paddock.EventError, ev.Kind, "%v", ev)
			require.ErrorIs(t, ev.Err, &paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored})
			return
		}
	}
}

// A checkpoint is one moment's files: a command that writes a counter to
// two files in turn, each write whole (a rename), is stopped while the
// archive is written, so the checkpoint holds the two at one moment (the
// second equal to the first, or one behind it), never the first read at
// one moment and the second later; on runc and under gVisor.
func TestACheckpointIsOneMoment(t *testing.T) {
	t.Parallel()
	for _, runtime := range []string{docker.RuntimeRunc, docker.RuntimeRunsc} {
		t.Run(runtime, func(t *testing.T) {
			t.Parallel()
			a := newAdapter(t, func(c *docker.Config) {
				c.Runtime = runtime
				if runtime == docker.RuntimeRunsc {
					c.MaxProcesses = 1024 // gVisor's own threads count
				}
			})
			name := "checkpoint-moment-" + runtime
			var h paddock.Handle
			if runtime == docker.RuntimeRunsc {
				h = runscSandbox(t, a, name)
			} else {
				h = sandbox(t, a, name, nil)
			}
			checkpointIsOneMoment(t, a, h)
		})
	}
}

func checkpointIsOneMoment(t *testing.T, a *docker.Adapter, h paddock.Handle) {
	ctx := ctxFor(t, 3*time.Minute)
	// tar reads /tmp/a, then 16 MiB, then /workspace/b.
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "head -c 16777216 /dev/urandom > /tmp/big"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", `i=0; echo ready
while :; do i=$((i+1)); echo $i > /tmp/a.new && mv /tmp/a.new /tmp/a; echo $i > /workspace/b.new && mv /workspace/b.new /workspace/b; done`), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer st.Close()
	ev, err := st.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(ev.Data))

	for i := range 3 {
		cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
		require.NoError(t, err)
		fork, err := paddock.Fork(ctx, a, h, cp, fmt.Sprint(h.Name, "-fork-", i), paddock.ForkOpts{})
		require.NoError(t, err)
		out, code := execOut(t, a, fork, "sh", "-c", "cat /tmp/a /workspace/b")
		require.NoError(t, a.Destroy(ctx, fork))
		require.Equal(t, 0, code, out)
		var first, second int
		_, err = fmt.Sscan(out, &first, &second)
		require.NoError(t, err, out)
		require.Contains(t, []int{first, first - 1}, second, "the two files at one moment: %d then %d", first, second)
	}
	// It goes on: the counter moves (a minute is a hang bound, not the
	// verdict).
	res, err = a.Exec(ctx, h, paddock.NewCmd("sh", "-c", `a=$(cat /tmp/a); i=0
while [ "$(cat /tmp/a)" = "$a" ]; do i=$((i+1)); [ $i -ge 600 ] && exit 1; sleep 0.1; done`), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "the command goes on after the checkpoints")
}

// A fork on an engine of this machine reads its checkpoint where it is
// mounted, read-only, and never through the exec's stdin; where the
// sandbox cannot read what is mounted (an archive kept 0600), or with an
// engine elsewhere (ForkThroughStdin), its bytes go through the stdin and
// the fork holds the same files; on runc and under gVisor.
func TestAForkReadsItsCheckpointWhereItIsMounted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		runtime string
	}{{"runc", docker.RuntimeRunc}, {"runsc", docker.RuntimeRunsc}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			a := newAdapter(t, func(c *docker.Config) { c.Runtime, c.CheckpointDir = tc.runtime, dir })
			h := runscSandbox(t, a, "seed-src-"+tc.name) // skips under runsc without it
			ctx := ctxFor(t, 3*time.Minute)
			out, code := execOut(t, a, h, "sh", "-c", "mkdir -p /workspace/d && printf abc > /workspace/d/f && ln -s f /workspace/d/l && chmod 640 /workspace/d/f")
			require.Zero(t, code, out)
			cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
			require.NoError(t, err)
			const look = "stat -c '%a %s' /workspace/d/f; readlink /workspace/d/l; f=/run/paddock/fork.tar; " +
				"if [ -e $f ]; then ls -ln $f | cut -c1-10; { echo x >> $f; } 2>/dev/null || echo read-only; else echo none; fi"
			for i, step := range []struct {
				before func()
				want   string
			}{
				{func() {}, "640 3\nf\n-rw-r--r--\nread-only\n"},
				{func() { chmodArchives(t, dir, 0o600) }, "640 3\nf\n-rw-------\nread-only\n"},
				{func() { docker.ForkThroughStdin(a) }, "640 3\nf\nnone\n"},
			} {
				step.before()
				fork, err := a.Fork(ctx, h, cp, fmt.Sprintf("seed-fork-%s-%d", tc.name, i), paddock.ForkOpts{})
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, a.Destroy(ctxFor(t, time.Minute), fork)) })
				out, code := execOut(t, a, fork, "sh", "-c", look)
				require.Zero(t, code, out)
				require.Equal(t, step.want, out, "step %d", i)
			}
		})
	}
}

// chmodArchives sets the mode of every checkpoint archive under dir.
func chmodArchives(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tar") {
			n++
			err = os.Chmod(p, mode)
		}
		return err
	}))
	require.Positive(t, n, "an archive")
}
