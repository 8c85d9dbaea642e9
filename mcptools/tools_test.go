package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/mcptools"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session connects the official Go SDK's client to the tools over a
// runtime of local and the fake, all closed when the test ends.
func session(t *testing.T) *mcp.ClientSession {
	t.Helper()
	l, err := local.New(local.Config{Root: t.TempDir()})
	require.NoError(t, err)
	f := fake.New()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: l, paddock.ProviderFake: f}})
	require.NoError(t, err)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	server, started := mcptools.NewServer(mcptools.Config{Transport: rt.Transport(), Version: "test"})
	ss, err := server.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		require.NoError(t, started.Close())
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(sctx))
		_ = l.Close()
		f.Reset()
	})
	return cs
}

// call calls a tool and answers its structured result (into out) or, for
// an error result, its text.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, tool)
	if res.IsError {
		return res.Content[0].(*mcp.TextContent).Text
	}
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, out), string(b))
	return ""
}

// An agent's session through the official MCP client: the tools listed,
// a sandbox made, commands run (exit codes, stdout and stderr apart,
// output bounded), files written, read (bounded) and listed, the sandbox
// destroyed; a wrong input or a failed operation is an error result
// naming its kind.
func TestAnAgentsSession(t *testing.T) {
	t.Parallel()
	cs := session(t)
	ctx := context.Background()
	listed, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
	}
	require.ElementsMatch(t, []string{"create_sandbox", "destroy_sandbox", "run_command", "read_file", "write_file", "list_files", "start_command", "read_output"}, names)

	var created mcptools.Created
	require.Empty(t, call(t, cs, "create_sandbox", map[string]any{"name": "agent"}, &created))
	require.Equal(t, mcptools.Created{Name: "agent", Provider: "local"}, created)

	var ran mcptools.Ran
	require.Empty(t, call(t, cs, "run_command", map[string]any{"name": "agent", "command": "echo hi; echo oops >&2; exit 3"}, &ran))
	require.Equal(t, mcptools.Ran{ExitCode: 3, Stdout: "hi\n", Stderr: "oops\n"}, ran)
	ran = mcptools.Ran{}
	require.Empty(t, call(t, cs, "run_command", map[string]any{"name": "agent", "command": "head -c 200000 /dev/zero | tr '\\0' x", "max_output_bytes": 1000}, &ran))
	require.True(t, ran.Truncated, "the output was cut")
	require.Equal(t, strings.Repeat("x", 1000), ran.Stdout)

	var done mcptools.Done
	require.True(t, strings.HasPrefix(call(t, cs, "write_file", map[string]any{"name": "f", "provider": "fake", "path": "/work/notes.txt", "content": "x"}, &done), "not_found"),
		"no sandbox yet")
	require.Empty(t, call(t, cs, "create_sandbox", map[string]any{"name": "f", "provider": "fake"}, &created))
	require.Empty(t, call(t, cs, "write_file", map[string]any{"name": "f", "provider": "fake", "path": "/work/notes.txt", "content": "hello, agent"}, &done))
	require.True(t, done.OK)
	var read mcptools.Read
	require.Empty(t, call(t, cs, "read_file", map[string]any{"name": "f", "provider": "fake", "path": "/work/notes.txt"}, &read))
	require.Equal(t, mcptools.Read{Content: "hello, agent"}, read)
	require.Empty(t, call(t, cs, "read_file", map[string]any{"name": "f", "provider": "fake", "path": "/work/notes.txt", "max_bytes": 5}, &read))
	require.Equal(t, mcptools.Read{Content: "hello", Truncated: true}, read)
	var files mcptools.Listed
	require.Empty(t, call(t, cs, "list_files", map[string]any{"name": "f", "provider": "fake", "path": "/work"}, &files))
	require.Equal(t, []mcptools.Entry{{Name: "notes.txt", Size: 12}}, files.Entries)

	for _, bad := range []struct {
		tool string
		args map[string]any
		kind string
	}{
		{"run_command", map[string]any{"name": "agent"}, "validating"}, // the SDK checks the schema first
		{"run_command", map[string]any{"name": "agent", "command": ""}, "invalid"},
		{"run_command", map[string]any{"name": "agent", "command": "true", "timeout_seconds": 99999}, "invalid"},
		{"run_command", map[string]any{"name": "f", "provider": "fake", "command": "true"}, "invalid"},
		{"read_file", map[string]any{"name": "f", "provider": "fake", "path": "/work/absent"}, "not_found"},
		{"read_file", map[string]any{"name": "absent", "provider": "fake", "path": "/x"}, "not_found"},
		{"list_files", map[string]any{"name": "", "path": "/"}, "invalid"},
		{"create_sandbox", map[string]any{"name": "x", "provider": "nowhere"}, ""},
		{"read_output", map[string]any{"command_id": "cmd-none"}, "not_found"},
		{"start_command", map[string]any{"name": "agent", "command": ""}, "invalid"},
	} {
		text := call(t, cs, bad.tool, bad.args, &struct{}{})
		require.NotEmpty(t, text, "%s %v is an error result", bad.tool, bad.args)
		require.True(t, strings.HasPrefix(text, bad.kind), "%s %v: %s", bad.tool, bad.args, text)
	}
	require.Empty(t, call(t, cs, "destroy_sandbox", map[string]any{"name": "agent"}, &done))
	require.Empty(t, call(t, cs, "destroy_sandbox", map[string]any{"name": "f", "provider": "fake"}, &done))
}

// A long command: started at once, its output read as it comes (bounded
// per read), its exit code once all was read; then its id is gone. Output
// beyond what is held waits for the reader: nothing is lost.
func TestALongCommandReadLater(t *testing.T) {
	t.Parallel()
	cs := session(t)
	var created mcptools.Created
	require.Empty(t, call(t, cs, "create_sandbox", map[string]any{"name": "long"}, &created))
	var started mcptools.Started
	// 3 MB, more than is held, then an exit code.
	require.Empty(t, call(t, cs, "start_command", map[string]any{"name": "long", "command": "head -c 3000000 /dev/zero | tr '\\0' y; echo done >&2; exit 4"}, &started))
	require.NotEmpty(t, started.CommandID)
	var stdout, stderr strings.Builder
	for {
		var out mcptools.Output
		require.Empty(t, call(t, cs, "read_output", map[string]any{"command_id": started.CommandID, "max_bytes": 1 << 20}, &out))
		stdout.WriteString(out.Stdout)
		stderr.WriteString(out.Stderr)
		if out.Ended {
			require.Equal(t, 4, out.ExitCode)
			require.Empty(t, out.Error)
			break
		}
		if !out.More {
			time.Sleep(5 * time.Millisecond) // an agent polls; the verdict is the bytes below
		}
	}
	require.Equal(t, strings.Repeat("y", 3_000_000), stdout.String(), "every byte, in order")
	require.Equal(t, "done\n", stderr.String())
	text := call(t, cs, "read_output", map[string]any{"command_id": started.CommandID}, &struct{}{})
	require.True(t, strings.HasPrefix(text, "not_found"), "read to its end, the id is gone: %s", text)
}
