// Package mcptools offers Paddock's sandboxes to agents as MCP tools
// (github.com/modelcontextprotocol/go-sdk): create and destroy a sandbox,
// run a command (its output bounded, its exit code answered), start a
// long one and read its output later, and read, write and list files. Each tool works on one provider's adapter of a
// runtime (a client.Transport: the runtime's own, or a daemon's). A tool
// whose input is wrong, or whose operation fails, answers an error result
// naming the taxonomy's kind, so the agent can correct itself.
package mcptools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
)

// Bounds of the tools.
const (
	DefaultMaxOutput = 64 << 10        // bytes of a command's output, or a file's, a tool answers
	MaxOutputCap     = 1 << 20         // the most a caller may ask for
	DefaultTimeout   = 2 * time.Minute // a command's time unless the caller says
	MaxTimeout       = 30 * time.Minute
	MaxWriteBytes    = 8 << 20 // a write_file's content
)

// Config configures NewServer.
type Config struct {
	// Transport reaches the runtime whose sandboxes the tools offer.
	Transport client.Transport
	// Provider is the provider a call uses when it names none (default
	// local).
	Provider paddock.Provider
	// Version is the server's version in the MCP handshake.
	Version string
}

// NewServer is an MCP server offering the tools over cfg's runtime; Close
// ends what its start_command started and is still held (each command
// goes on in its sandbox where the provider keeps sessions).
func NewServer(cfg Config) (*mcp.Server, io.Closer) {
	if cfg.Provider == "" {
		cfg.Provider = paddock.ProviderLocal
	}
	t := tools{cfg: cfg, started: &commands{byID: map[string]*started{}}}
	s := mcp.NewServer(&mcp.Implementation{Name: "paddock", Version: cfg.Version}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "create_sandbox", Description: "Create a sandbox (a machine to run commands and keep files in) under a name of your choosing; creating one that exists answers it."}, t.create)
	mcp.AddTool(s, &mcp.Tool{Name: "destroy_sandbox", Description: "Destroy a sandbox and everything in it; an absent one is fine."}, t.destroy)
	mcp.AddTool(s, &mcp.Tool{Name: "run_command", Description: "Run a shell command (sh -c) in a sandbox and answer its exit code, stdout and stderr (up to max_output_bytes: truncated says when the output was cut; a command printing over 1 MiB is stopped and answered as an error)."}, t.run)
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Read a file of a sandbox (bounded: truncated says when it was cut)."}, t.read)
	mcp.AddTool(s, &mcp.Tool{Name: "write_file", Description: "Write a file of a sandbox (its parent directories are made), replacing it whole."}, t.write)
	mcp.AddTool(s, &mcp.Tool{Name: "list_files", Description: "List a directory of a sandbox."}, t.list)
	mcp.AddTool(s, &mcp.Tool{Name: "start_command", Description: "Start a long shell command (sh -c) in a sandbox and answer its command_id at once; read_output takes its output as it comes, and its exit code at its end. Up to 1 MiB of output is held for it; beyond, the command waits to be read."}, t.start)
	mcp.AddTool(s, &mcp.Tool{Name: "read_output", Description: "Take the output a started command printed since the last read (stdout, then stderr, up to max_bytes); once it ended and all was read, its exit code."}, t.readOutput)
	return s, t.started
}

type tools struct {
	cfg     Config
	started *commands
}

// Sandbox names a sandbox: every tool's first input.
type Sandbox struct {
	Name     string `json:"name" jsonschema:"the sandbox's name"`
	Provider string `json:"provider,omitempty" jsonschema:"where the sandbox lives (local, docker, e2b, daytona, sprites, fake); default: the server's"`
}

// handle checks s and answers its adapter and handle.
func (t tools) handle(s Sandbox) (*client.Client, paddock.Handle, error) {
	if s.Name == "" {
		return nil, paddock.Handle{}, &paddock.InvalidError{Detail: "name is required"}
	}
	p := paddock.Provider(s.Provider)
	if p == "" {
		p = t.cfg.Provider
	}
	a := client.New(t.cfg.Transport, p)
	return a, a.BuildHandle(s.Name), nil
}

// failure is an error as a tool's answer: an error result naming the
// taxonomy's kind, so the agent can tell what went wrong.
func failure(err error) *mcp.CallToolResult {
	kind := paddock.KindOf(err)
	if kind == "" {
		kind = "error"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %v", kind, err)}}}
}

// Created is create_sandbox's answer.
type Created struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
}

func (t tools) create(ctx context.Context, _ *mcp.CallToolRequest, in Sandbox) (*mcp.CallToolResult, Created, error) {
	a, h, err := t.handle(in)
	if err == nil {
		h, err = a.Create(ctx, in.Name, paddock.CreateOpts{})
	}
	if err != nil {
		return failure(err), Created{}, nil
	}
	return nil, Created{Name: h.Name, Provider: string(h.Provider)}, nil
}

// Done is the answer of a tool with nothing else to say.
type Done struct {
	OK bool `json:"ok"`
}

func (t tools) destroy(ctx context.Context, _ *mcp.CallToolRequest, in Sandbox) (*mcp.CallToolResult, Done, error) {
	a, h, err := t.handle(in)
	if err == nil {
		err = a.Destroy(ctx, h)
	}
	if err != nil {
		return failure(err), Done{}, nil
	}
	return nil, Done{OK: true}, nil
}

// Command is run_command's input.
type Command struct {
	Sandbox
	Command        string `json:"command" jsonschema:"the shell command to run (sh -c)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"how long it may run (default 120, at most 1800)"`
	MaxOutputBytes int    `json:"max_output_bytes,omitempty" jsonschema:"how much of its stdout and stderr to answer (default 65536, at most 1048576)"`
}

// Ran is run_command's answer.
type Ran struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

func (t tools) run(ctx context.Context, _ *mcp.CallToolRequest, in Command) (*mcp.CallToolResult, Ran, error) {
	a, h, err := t.handle(in.Sandbox)
	if err == nil && in.Command == "" {
		err = &paddock.InvalidError{Detail: "command is required"}
	}
	limit, lerr := bounded(in.MaxOutputBytes, DefaultMaxOutput, MaxOutputCap, "max_output_bytes")
	timeout, terr := bounded(in.TimeoutSeconds, int(DefaultTimeout/time.Second), int(MaxTimeout/time.Second), "timeout_seconds")
	if err = errors.Join(err, lerr, terr); err != nil {
		return failure(err), Ran{}, nil
	}
	d := time.Duration(timeout) * time.Second
	// The adapter holds up to MaxOutputCap (a command printing more is
	// stopped, and the answer says so); the answer is cut to limit.
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", in.Command), paddock.ExecOpts{Timeout: &d, MaxOutput: MaxOutputCap})
	if err != nil {
		return failure(err), Ran{}, nil
	}
	out, errOut := clip(res.Stdout, limit), clip(res.Stderr, limit-min(len(res.Stdout), limit))
	return nil, Ran{ExitCode: res.ExitCode, Stdout: string(out), Stderr: string(errOut),
		Truncated: len(out) < len(res.Stdout) || len(errOut) < len(res.Stderr)}, nil
}

// bounded is v, or def when 0, refusing what is negative or above max.
func bounded(v, def, maxV int, name string) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > maxV:
		return 0, &paddock.InvalidError{Detail: fmt.Sprintf("%s must be between 1 and %d", name, maxV)}
	}
	return v, nil
}

func clip(b []byte, n int) []byte { return b[:min(len(b), max(n, 0))] }

// Path is the input of the file tools but write_file.
type Path struct {
	Sandbox
	Path     string `json:"path" jsonschema:"an absolute path in the sandbox"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"read_file: how much to answer (default 65536, at most 1048576)"`
}

// Read is read_file's answer.
type Read struct {
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

func (t tools) read(ctx context.Context, _ *mcp.CallToolRequest, in Path) (*mcp.CallToolResult, Read, error) {
	a, h, err := t.handle(in.Sandbox)
	limit, lerr := bounded(in.MaxBytes, DefaultMaxOutput, MaxOutputCap, "max_bytes")
	if err = errors.Join(err, lerr, needPath(in.Path)); err != nil {
		return failure(err), Read{}, nil
	}
	rc, err := a.ReadFile(ctx, h, in.Path)
	if err != nil {
		return failure(err), Read{}, nil
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(limit)+1))
	if err != nil {
		return failure(err), Read{}, nil
	}
	return nil, Read{Content: string(clip(b, limit)), Truncated: len(b) > limit}, nil
}

func needPath(p string) error {
	if p == "" {
		return &paddock.InvalidError{Detail: "path is required"}
	}
	return nil
}

// Write is write_file's input.
type Write struct {
	Sandbox
	Path    string `json:"path" jsonschema:"an absolute path in the sandbox"`
	Content string `json:"content" jsonschema:"the file's whole content (at most 8 MiB)"`
}

func (t tools) write(ctx context.Context, _ *mcp.CallToolRequest, in Write) (*mcp.CallToolResult, Done, error) {
	a, h, err := t.handle(in.Sandbox)
	if err == nil && len(in.Content) > MaxWriteBytes {
		err = &paddock.InvalidError{Detail: fmt.Sprintf("content is over %d bytes", MaxWriteBytes)}
	}
	if err = errors.Join(err, needPath(in.Path)); err != nil {
		return failure(err), Done{}, nil
	}
	if err := a.WriteFile(ctx, h, in.Path, 0o644, bytes.NewReader([]byte(in.Content))); err != nil {
		return failure(err), Done{}, nil
	}
	return nil, Done{OK: true}, nil
}

// Entry is one file of list_files' answer.
type Entry struct {
	Name  string `json:"name"`
	IsDir bool   `json:"is_dir"`
	Size  int64  `json:"size"`
}

// Listed is list_files' answer.
type Listed struct {
	Entries []Entry `json:"entries"`
}

func (t tools) list(ctx context.Context, _ *mcp.CallToolRequest, in Path) (*mcp.CallToolResult, Listed, error) {
	a, h, err := t.handle(in.Sandbox)
	if err = errors.Join(err, needPath(in.Path)); err != nil {
		return failure(err), Listed{}, nil
	}
	files, err := a.ListDir(ctx, h, in.Path)
	if err != nil {
		return failure(err), Listed{}, nil
	}
	out := Listed{Entries: make([]Entry, 0, len(files))}
	for _, f := range files {
		out.Entries = append(out.Entries, Entry{Name: f.Name, IsDir: f.Type == paddock.FileDir, Size: f.Size})
	}
	return nil, out, nil
}
