package fake

import (
	"context"
	"strconv"

	"github.com/paddockhq/paddock"
)

var _ paddock.SessionTerminator = (*Adapter)(nil)

// Exec evaluates the script without running anything (docs/contract.md#fake):
// stdout and stderr in script order (stderr into stdout when merged) under
// the output cap, the first exit code (default 0), nothing after a terminal
// instruction, and closed_before_exit for a drop. A timeout of zero answers
// the timeout error before anything else; any other timeout is moot, since
// evaluation is instantaneous.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	_, out, err := paddock.StartExec(ctx, cmd, opts, paddock.ExecLimits{}, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	script, err := parseScript(cmd)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	if _, err := a.lock(h); err != nil {
		return paddock.ExecResult{}, err
	}
	a.mu.Unlock()
	return evaluate(script, out)
}

// Spawn starts the script as a session "fake-sess-<n>" and returns its
// first subscriber, registered before the first event can be emitted. With
// opts.Name set and a live session of that name in the sandbox, it attaches
// to that session instead of starting another. stdin and detachable are
// ignored (every fake command is a detachable session); tty, like a name,
// needs its capability in the fake's set.
func (a *Adapter) Spawn(_ context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	script, err := parseScript(cmd)
	if err != nil {
		return nil, err
	}
	sb, err := a.lock(h)
	if err != nil {
		return nil, err
	}
	defer a.mu.Unlock()
	if opts.Name != "" {
		for _, s := range sb.sessions {
			if s.name == opts.Name && s.live() {
				return s.subscribe(s.id), nil
			}
		}
	}
	a.nextSession++
	id := "fake-sess-" + strconv.FormatUint(a.nextSession, 10)
	s := newSession(id, opts.Name, cmd, a.now)
	st := s.subscribe(id)
	sb.sessions[id] = s
	go s.run(script)
	return st, nil
}

// ListSessions lists every session of the sandbox, finished ones too.
func (a *Adapter) ListSessions(_ context.Context, h paddock.Handle) ([]paddock.Session, error) {
	if err := paddock.Require(a, paddock.CapAttach); err != nil {
		return nil, err
	}
	sb, err := a.lock(h)
	if err != nil {
		return nil, err
	}
	defer a.mu.Unlock()
	out := make([]paddock.Session, 0, len(sb.sessions))
	for _, s := range sb.sessions {
		out = append(out, s.info())
	}
	return out, nil
}

// Attach replays every buffered event of the session in order, then either
// its recorded terminal event or its live events, under a new subscription.
// ErrNotFound for an unknown sandbox or session.
func (a *Adapter) Attach(_ context.Context, h paddock.Handle, sessionID string, _ paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	s, err := a.session(h, sessionID)
	if err != nil {
		return nil, err
	}
	return s.subscribe(sessionID), nil
}

// session looks a session up under the handle's sandbox.
func (a *Adapter) session(h paddock.Handle, sessionID string) (*session, error) {
	sb, err := a.lock(h)
	if err != nil {
		return nil, err
	}
	defer a.mu.Unlock()
	s, ok := sb.sessions[sessionID]
	if !ok {
		return nil, paddock.ErrNotFound
	}
	return s, nil
}

// TerminateSession stops one session of this sandbox (docs/contract.md#fake). An
// absent session is ok in graceful mode and unconfirmed in force mode. A
// present one is killed and confirmed dead; if it had not ended, its
// subscribers receive exit 137. A finished session keeps its result, and
// concurrent terminations yield one terminal event.
func (a *Adapter) TerminateSession(_ context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	opts, err := paddock.ValidateTermination(sessionID, opts)
	if err != nil {
		return err
	}
	if err := paddock.Require(a, paddock.CapTerminateSession); err != nil {
		return err
	}
	if opts.Mode == paddock.TerminateForce {
		if err := paddock.Require(a, paddock.CapForceTerminateSession); err != nil {
			return err
		}
	}
	s, err := a.session(h, sessionID)
	if err != nil {
		if opts.Mode == paddock.TerminateForce {
			return paddock.ErrTerminationUnconfirmed
		}
		return nil
	}
	s.stop(paddock.Exit(killedExitCode))
	return nil
}

// killedExitCode is the exit code a terminated session reports (128+SIGKILL).
const killedExitCode = 137
