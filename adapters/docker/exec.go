package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
)

// randomID is 24 hex characters.
func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// envOf is a command's environment as the engine takes it (merged over
// the sandbox's own).
func envOf(cmd paddock.Cmd) []string {
	env := make([]string, 0, len(cmd.Env))
	for _, e := range cmd.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	return env
}

// Exec runs cmd to completion: stdout and stderr apart (or merged in
// arrival order) under the output cap, the exit code from the engine. Past
// its timeout or its output cap the command is killed inside the sandbox,
// every process it started with it, not only abandoned.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(ctx, cmd, opts, a.cfg.Exec, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	runCtx, cancel := dl.Context(ctx)
	defer cancel()
	a.serveEgress(runCtx, h.Name)
	token := randomID()
	x, err := a.startExec(runCtx, h.Name, execSpec{cmd: append([]string{"/bin/sh", "-c", scriptExec, "paddock"}, cmd.Argv()...),
		env: append(envOf(cmd), "PADDOCK_EXEC="+token), dir: cmd.Dir})
	if err != nil {
		if dl.Finite() && dl.Expired() {
			return paddock.ExecResult{}, dl.Err()
		}
		return paddock.ExecResult{}, err
	}
	defer a.touch(h)
	src := &execOutput{a: a, sandbox: h.Name, token: token, x: x, buf: make([]byte, 32<<10)}
	defer src.close()
	stop := context.AfterFunc(runCtx, x.close)
	defer stop()
	return paddock.CollectExec(runCtx, src, dl, out, nil)
}

// execOutput is an exec's attached output as CollectExec reads it: its
// chunks, then the exit the engine recorded.
type execOutput struct {
	a       *Adapter
	sandbox string
	token   string // names the exec's processes, for the kill
	x       *attached
	buf     []byte // reused: CollectExec copies each chunk before the next read
	pending error  // a read's error, answered after the data that came with it
	ended   bool   // the output ended: nothing to kill
}

func (e *execOutput) Next(ctx context.Context) (paddock.Event, error) {
	for e.pending == nil {
		stream, data, err := e.x.next(e.buf)
		e.pending = err
		if len(data) > 0 {
			return paddock.Event{Kind: muxKind(stream), Data: data}, nil
		}
	}
	err := e.pending
	if ctx.Err() != nil {
		return paddock.Event{}, ctxError(ctx) // close kills what the deadline cut short
	}
	e.ended = true // whatever the engine says now, the command is not ours to kill
	if !errors.Is(err, io.EOF) {
		return paddock.Event{}, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}
	}
	code, err := e.a.finished(e.sandbox, e.x.id)
	if err != nil {
		return paddock.Event{}, err
	}
	return paddock.Exit(code), nil
}

// close closes the attachment, and kills the exec's processes unless its
// output ended (cut by its deadline, or past its output cap).
func (e *execOutput) close() {
	e.x.close()
	if !e.ended {
		e.a.killExec(e.sandbox, e.token)
	}
}

// finished is the exit code of an exec whose stream ended, provided the
// sandbox still runs: the engine reports a command killed with its
// container as exit 0, which would be a made-up success.
func (a *Adapter) finished(sandbox, execID string) (int, error) {
	code, err := a.exitCode(execID)
	if err != nil {
		return 0, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineWait)
	defer cancel()
	res, err := a.engine.ContainerInspect(ctx, containerName(sandbox), client.ContainerInspectOptions{})
	if err != nil || state(res) != container.StateRunning {
		return 0, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}
	}
	return code, nil
}

// killExec kills every process of a timed-out Exec.
func (a *Adapter) killExec(sandbox, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), engineWait)
	defer cancel()
	if _, err := a.run(ctx, sandbox, execSpec{cmd: sh(scriptExecKill, token)}, nil); err != nil {
		a.log.Warn().Str("sandbox", sandbox).Str("error", err.Error()).Msg("docker: killing a timed-out command failed")
	}
}

// ExecLimits are the bounds of Exec's timeouts the adapter was configured
// with, under which the runtime fixes each exec's deadline.
func (a *Adapter) ExecLimits() paddock.ExecLimits { return a.cfg.Exec }
