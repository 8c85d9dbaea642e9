package mcptools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paddockhq/paddock"
)

// Bounds of the commands start_command starts.
const (
	MaxStarted  = 64      // commands started and not yet read to their end, per server
	MaxHeldOut  = 1 << 20 // output held per command until read_output takes it; the command waits beyond
	startedIDsz = 8
)

// started is one command start_command started: its output held (up to
// MaxHeldOut, then the command is held back until it is read) and its end.
type started struct {
	st    paddock.Stream
	mu    sync.Mutex
	out   []byte
	err   []byte
	ended bool
	code  int
	fate  string        // the error that ended it without an exit, if any
	space chan struct{} // a read_output took output: the reader may go on
	done  chan struct{} // the reader returned
}

// commands are a server's started commands, by id.
type commands struct {
	mu   sync.Mutex
	byID map[string]*started
	wg   sync.WaitGroup
}

// Close detaches every started command still held (each goes on in its
// sandbox where the provider keeps sessions) and waits for their readers.
func (c *commands) Close() error {
	c.mu.Lock()
	all := c.byID
	c.byID = nil
	c.mu.Unlock()
	for _, s := range all {
		_ = s.st.Close()
	}
	c.wg.Wait()
	return nil
}

// add holds s under a new id; false when MaxStarted are held (or closed).
func (c *commands) add(s *started) (string, bool) {
	b := make([]byte, startedIDsz)
	_, _ = rand.Read(b)
	id := "cmd-" + hex.EncodeToString(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil || len(c.byID) >= MaxStarted {
		return "", false
	}
	c.byID[id] = s
	c.wg.Add(1)
	go func() { defer c.wg.Done(); s.read() }()
	return id, true
}

// read takes the command's events into its buffers, waiting while they
// hold MaxHeldOut, until its end.
func (s *started) read() {
	defer close(s.done)
	for {
		ev, err := s.st.Next(context.Background())
		s.mu.Lock()
		switch {
		case err != nil: // closed, or the stream ended without its end
			s.ended, s.fate = true, "the command's stream ended without its exit"
		case ev.Kind == paddock.EventExit:
			s.ended, s.code = true, ev.Code
		case ev.Kind == paddock.EventError:
			s.ended, s.fate = true, ev.Err.Error()
		case ev.Kind == paddock.EventStderr:
			s.err = append(s.err, ev.Data...)
		default:
			s.out = append(s.out, ev.Data...)
		}
		ended, full := s.ended, len(s.out)+len(s.err) >= MaxHeldOut
		s.mu.Unlock()
		if ended {
			return
		}
		if full {
			<-s.space // read_output takes some (or Close ends the stream: Next answers)
		}
	}
}

// StartInput is start_command's input.
type StartInput struct {
	Sandbox
	Command string `json:"command" jsonschema:"the shell command to start (sh -c)"`
}

// Started is start_command's answer.
type Started struct {
	CommandID string `json:"command_id"`
}

func (t tools) start(ctx context.Context, _ *mcp.CallToolRequest, in StartInput) (*mcp.CallToolResult, Started, error) {
	a, h, err := t.handle(in.Sandbox)
	if err == nil && in.Command == "" {
		err = &paddock.InvalidError{Detail: "command is required"}
	}
	if err != nil {
		return failure(err), Started{}, nil
	}
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", in.Command), paddock.SpawnOpts{})
	if err != nil {
		return failure(err), Started{}, nil
	}
	s := &started{st: st, space: make(chan struct{}, 1), done: make(chan struct{})}
	id, ok := t.started.add(s)
	if !ok {
		_ = st.Close()
		return failure(&paddock.InvalidError{Detail: fmt.Sprintf("%d started commands are not read to their end yet: read_output them first", MaxStarted)}), Started{}, nil
	}
	return nil, Started{CommandID: id}, nil
}

// ReadInput is read_output's input.
type ReadInput struct {
	CommandID string `json:"command_id" jsonschema:"start_command's command_id"`
	MaxBytes  int    `json:"max_bytes,omitempty" jsonschema:"how much output to take (default 65536, at most 1048576)"`
}

// Output is read_output's answer: the output since the last read (stdout
// first), and, once the command ended and all of it was read, its exit
// code (or why it ended without one).
type Output struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	More     bool   `json:"more"` // output is held beyond this answer
	Ended    bool   `json:"ended"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
}

func (t tools) readOutput(_ context.Context, _ *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, Output, error) {
	limit, err := bounded(in.MaxBytes, DefaultMaxOutput, MaxOutputCap, "max_bytes")
	if err != nil {
		return failure(err), Output{}, nil
	}
	t.started.mu.Lock()
	s := t.started.byID[in.CommandID]
	t.started.mu.Unlock()
	if s == nil {
		return failure(fmt.Errorf("%w: no started command %q (or it was read to its end)", paddock.ErrNotFound, in.CommandID)), Output{}, nil
	}
	s.mu.Lock()
	n := min(len(s.out), limit)
	out := Output{Stdout: string(s.out[:n])}
	s.out = s.out[n:]
	m := min(len(s.err), limit-n)
	out.Stderr = string(s.err[:m])
	s.err = s.err[m:]
	out.More = len(s.out)+len(s.err) > 0
	if !out.More && s.ended {
		out.Ended, out.ExitCode, out.Error = true, s.code, s.fate
	}
	s.mu.Unlock()
	select { // the reader may go on
	case s.space <- struct{}{}:
	default:
	}
	if out.Ended {
		t.started.mu.Lock()
		delete(t.started.byID, in.CommandID)
		t.started.mu.Unlock()
		<-s.done
		_ = s.st.Close()
	}
	return nil, out, nil
}
