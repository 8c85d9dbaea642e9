package daytona_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Exec through /process/execute: stdout and stderr apart (or merged), the
// real exit code, bytes exact (NUL, no newline, invalid UTF-8), argv
// quoted exactly, environment and directory, the deadline.
func TestExec(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "printf 'to stdout'; printf 'to stderr' >&2; exit 4"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "to stdout", string(res.Stdout))
	assert.Equal(t, "to stderr", string(res.Stderr))
	assert.Equal(t, 4, res.ExitCode)

	res, err = a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "printf 'a'; printf 'b' >&2; printf 'c'"), paddock.ExecOpts{StderrToStdout: true})
	require.NoError(t, err)
	assert.Equal(t, "abc", string(res.Stdout))
	assert.Empty(t, res.Stderr)

	res, err = a.Exec(ctx, h, paddock.NewCmd("printf", `a\000b\377`), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "a\x00b\xff", string(res.Stdout), "bytes exact")

	args := []string{"it's", "two words", "$HOME", `back\slash`, "new\nline", ""}
	cmd := paddock.NewCmd("sh", append([]string{"-c", `for a do printf '%s|' "$a"; done; printf '%s|%s' "$X" "$(pwd)"`, "sh"}, args...)...)
	cmd.Env = []paddock.EnvVar{{Name: "X", Value: "y z'"}}
	cmd.Dir = "/tmp"
	res, err = a.Exec(ctx, h, cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Contains(t, string(res.Stdout), "it's|two words|$HOME|back\\slash|new\nline||y z'|")
	var sent map[string]any
	reqs := srv.Requests()
	for _, r := range reqs {
		if r.Route == "TOOLBOX POST /process/execute" {
			sent = nil
			require.NoError(t, json.Unmarshal([]byte(r.Body), &sent))
		}
	}
	assert.Equal(t, map[string]any{"X": "y z'"}, sent["envs"], "the environment in the daemon's own field, envs")
	assert.NotContains(t, sent, "env")

	res, err = a.Exec(ctx, h, paddock.NewCmd("cat"), paddock.ExecOpts{})
	require.NoError(t, err, "a command reading stdin gets EOF, never the script")
	assert.Empty(t, res.Stdout)

	began := time.Now()
	_, err = a.Exec(ctx, h, paddock.NewCmd("sleep", "600"), paddock.ExecOpts{Timeout: paddock.Duration(1500 * time.Millisecond)})
	require.ErrorIs(t, err, paddock.ErrExecTimeout)
	assert.Less(t, time.Since(began), 5*time.Minute, "the deadline ended it, not the command's ten minutes")

	_, err = a.Exec(ctx, h, paddock.NewCmd("echo", "\xff"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	_, err = a.Exec(ctx, a.BuildHandle("absent"), paddock.NewCmd("true"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)

	// A stopped sandbox is started first.
	require.NoError(t, a.Suspend(ctx, h))
	res, err = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Zero(t, res.ExitCode)
	assert.Equal(t, "started", srv.State("box"))
}

// The follow's frames cut the journal anywhere, markers included: at one,
// two, three and seven bytes a frame, each stream still gets exactly its
// bytes (NUL, no final newline, invalid UTF-8 kept) and the real exit.
func TestSpawnFollowsFramesCutAnywhere(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1, 2, 3, 7} {
		srv := daytonatest.NewServer(t, fastFollow(), daytonatest.WithFrameSize(size))
		a := newAdapter(t, srv)
		h, err := a.Create(ctx, "box", paddock.CreateOpts{})
		require.NoError(t, err)
		st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", `printf 'a\000b'; printf 'e1\n' >&2; printf '\377 no newline'; printf e2 >&2; exit 6`), paddock.SpawnOpts{})
		require.NoError(t, err)
		got, err := readStream(t, st)
		require.NoError(t, err, "frames of %d", size)
		assert.Equal(t, "a\x00b\xff no newline|e1\ne2|6", got, "frames of %d", size)
		require.NoError(t, st.Close())
	}
}
