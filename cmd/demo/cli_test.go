package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cli runs the demo's CLI in-process and returns its exit code and output.
func cli(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append(args[:1:1], append([]string{"-root", root}, args[1:]...)...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCLIExitsWithTheCommandsCode(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, code := range []string{"0", "1", "42"} {
		t.Run("exit "+code, func(t *testing.T) {
			got, out, errOut := cli(t, root, "run", "--", "sh", "-c", "echo out; echo err >&2; exit "+code)
			assert.Equal(t, atoi(code), got)
			assert.Equal(t, "out\n", out, "stdout to stdout")
			assert.Equal(t, "err\n", errOut, "stderr to stderr")
		})
	}
	t.Run("a dropped stream exits 125", func(t *testing.T) {
		got, out, errOut := cli(t, root, "run", "-provider", "fake", "--", "emit", "out:partial", "drop")
		assert.Equal(t, 125, got)
		assert.Equal(t, "partial", out)
		assert.Contains(t, errOut, "closed_before_exit")
	})
	t.Run("stdin reaches the command", func(t *testing.T) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"run", "-root", root, "--", "tr", "a-z", "A-Z"}, strings.NewReader("shout\n"), &out, &errOut)
		assert.Equal(t, 0, code)
		assert.Equal(t, "SHOUT\n", out.String())
	})
	t.Run("a program that does not exist exits 127, one that is not executable 126, as under a shell", func(t *testing.T) {
		got, out, errOut := cli(t, root, "run", "--", "no-such-program-here")
		assert.Equal(t, 127, got)
		assert.Empty(t, out)
		assert.Equal(t, "no-such-program-here: command not found\n", errOut)
		got, _, errOut = cli(t, root, "run", "--", "/etc/passwd")
		assert.Equal(t, 126, got)
		assert.Equal(t, "/etc/passwd: Permission denied\n", errOut)
	})
	t.Run("usage errors exit 2", func(t *testing.T) {
		got, _, _ := cli(t, root, "run")
		assert.Equal(t, 2, got)
		got, _, _ = cli(t, root, "nonsense")
		assert.Equal(t, 2, got)
	})
	t.Run("an unknown provider fails loudly", func(t *testing.T) {
		got, _, errOut := cli(t, root, "run", "-provider", "nope", "--", "true")
		assert.Equal(t, 125, got)
		assert.Contains(t, errOut, `unknown sandbox provider "nope"`)
	})
}

func TestCLISessions(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	code, _, _ := cli(t, root, "run", "--", "sh", "-c", "echo first; exit 7")
	require.Equal(t, 7, code)
	code, out, _ := cli(t, root, "sessions")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1)
	id := strings.Fields(lines[0])[0]
	assert.Contains(t, lines[0], "sh -c echo first; exit 7")

	code, out, _ = cli(t, root, "attach", id)
	assert.Equal(t, 7, code, "attach replays and ends with the recorded exit")
	assert.Equal(t, "first\n", out)
	code, out, _ = cli(t, root, "terminate", id)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "terminated "+id)
	code, _, errOut := cli(t, root, "attach", "s-missing")
	assert.Equal(t, 125, code)
	assert.Contains(t, errOut, "not found")
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// demo -h lists every subcommand and each one's flags; a subcommand's -h
// prints its own; both exit 0, on stdout.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, "%v", args)
		assert.Empty(t, errOut.String())
		for _, want := range []string{"demo [serve] [flags]", "demo run [flags] -- CMD ARGS...", "demo sessions [flags]",
			"demo attach [flags] SESSION", "demo terminate [flags] SESSION",
			"Flags of serve:", "-addr", "-sockets-per-client", "-scrollback", "Flags of run:", "-provider", "-sandbox", "-root",
			"Flags of terminate:", "-force", "-timeout"} {
			assert.Contains(t, out.String(), want, "%v", args)
		}
	}
	for _, cmd := range []string{"serve", "run", "sessions", "attach", "terminate"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{cmd, "-h"}, strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, cmd)
		assert.Contains(t, out.String(), "usage: demo ", cmd)
		assert.Contains(t, out.String(), "-", cmd)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"run", "-bogus"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut.String(), "flag provided but not defined: -bogus")
	assert.Contains(t, errOut.String(), "usage: demo run")
}

// cancelOn cancels when what it is written holds marker.
type cancelOn struct {
	marker string
	cancel context.CancelFunc
	buf    syncbuf.Buffer
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.marker) {
		c.cancel()
	}
	return n, err
}

// Ctrl-C on demo run stops the command, on every provider, and exits 130.
func TestCLIInterruptStopsTheRun(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"local", "fake"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &cancelOn{marker: "ready", cancel: cancel}
			argv := []string{"sh", "-c", "echo ready; exec sleep 60"}
			if provider == "fake" {
				argv = []string{"emit", "out:ready", "stay"}
			}
			var errOut syncbuf.Buffer
			stdin, typing := io.Pipe() // a terminal nobody types into: stdin stays open
			defer typing.Close()
			code := run(ctx, append([]string{"run", "-root", t.TempDir(), "-provider", provider, "--"}, argv...), stdin, out, &errOut)
			assert.Equal(t, 130, code)
			assert.Contains(t, errOut.String(), "stopped", "the interrupted command was stopped: %s", errOut.String())
		})
	}
}

// A limit of the console that is not positive is refused before anything
// starts, with a usage exit.
func TestServeRefusesLimitsThatAreNotPositive(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"-scrollback=0", "-max-upload=-1", "-sockets-per-client=0", "-socket-first-message=0s"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", flag}, strings.NewReader(""), &out, &errOut)
		assert.Equal(t, exitUsage, code, flag)
		assert.Contains(t, errOut.String(), "limits must be positive", flag)
	}
}
