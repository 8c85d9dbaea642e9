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
	dl, out, err := paddock.StartExec(cmd, opts, a.cfg.Exec, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	runCtx, cancel := dl.Context(ctx)
	defer cancel()
	token := randomID()
	x, err := a.startExec(runCtx, h.Name, execSpec{cmd: cmd.Argv(), env: append(envOf(cmd), "PADDOCK_EXEC="+token), dir: cmd.Dir})
	if err != nil {
		if dl.Finite() && dl.Expired() {
			return paddock.ExecResult{}, dl.Err()
		}
		return paddock.ExecResult{}, err
	}
	defer x.close()
	defer a.touch(h)
	stop := context.AfterFunc(runCtx, x.close)
	defer stop()
	buf := make([]byte, 32<<10)
	for {
		stream, data, err := x.next(buf)
		if over := out.Add(muxKind(stream), data); over != nil {
			a.killExec(h.Name, token)
			return paddock.ExecResult{}, over
		}
		if err == nil {
			continue
		}
		if runCtx.Err() != nil {
			a.killExec(h.Name, token)
			if dl.Finite() && dl.Expired() {
				return paddock.ExecResult{}, dl.Err()
			}
			return paddock.ExecResult{}, ctxError(runCtx)
		}
		if !errors.Is(err, io.EOF) {
			return paddock.ExecResult{}, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}
		}
		break
	}
	code, err := a.finished(h.Name, x.id)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	return out.Result(code), nil
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
