package e2b_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The journal wrapper hands every byte of every argument to the command,
// copies stdout and stderr into the session's files as they pass through,
// and records the exit code last.
func TestJournalWrapperIsExactAndRecordsTheExit(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	args := []string{"it's", "two words", "$HOME", `back\slash`, "new\nline", "\xff\xfe not utf-8", "", "trailing\n\n"}
	script := `for a do printf '%s\0' "$a"; done; printf 'to stderr' >&2; exit 17`
	cmd := e2b.JournalCmd("s-1", paddock.NewCmd("/bin/sh", append([]string{"-c", script, "sh"}, args...)...))
	c := exec.Command(cmd.Path, cmd.Args...)
	c.Env = append(os.Environ(), "HOME="+home)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 17, exitErr.ExitCode(), "the wrapper exits with the command's code")

	want := strings.Join(args, "\x00") + "\x00"
	assert.Equal(t, want, stdout.String(), "every argument exactly")
	assert.Equal(t, "to stderr", stderr.String())
	dir := filepath.Join(home, e2b.JournalDir("s-1"))
	out, err := os.ReadFile(filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.Equal(t, want, string(out), "the journal holds the same bytes")
	errb, err := os.ReadFile(filepath.Join(dir, "err"))
	require.NoError(t, err)
	assert.Equal(t, "to stderr", string(errb))
	record, err := os.ReadFile(filepath.Join(dir, "exit"))
	require.NoError(t, err)
	code, ok := e2b.ParseExit(record)
	require.True(t, ok)
	assert.Equal(t, 17, code)
	line, err := os.ReadFile(filepath.Join(dir, "cmd"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(line), "/bin/sh -c "), string(line))
	left, err := filepath.Glob(filepath.Join(dir, "*.fifo"))
	require.NoError(t, err)
	assert.Empty(t, left, "no pipes left behind")
}

func TestParseExit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]struct {
		code int
		ok   bool
	}{
		"17\n": {17, true}, "0\n": {0, true}, "255\n": {255, true},
		"7": {0, false}, "bad\n": {0, false}, "": {0, false}, "-1\n": {0, false}, "256\n": {0, false}, "1\n2\n": {0, false},
	} {
		code, ok := e2b.ParseExit([]byte(in))
		assert.Equal(t, want.ok, ok, "%q", in)
		assert.Equal(t, want.code, code, "%q", in)
	}
}
