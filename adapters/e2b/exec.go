package e2b

import (
	"context"

	"github.com/paddockhq/paddock"
)

// Exec runs cmd to completion under one deadline: at the deadline the
// process is killed (on E2B it would outlive its request) and the timeout
// answered. Output is held up to the cap.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(cmd, opts, a.cfg.Exec, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	if !textOnly(cmd) {
		return paddock.ExecResult{}, &paddock.InvalidError{Detail: paddock.DetailCommand + ": E2B carries arguments as UTF-8 text"}
	}
	ctx, cancel := dl.Context(ctx)
	defer cancel()
	id, err := a.running(ctx, h)
	if err != nil {
		return paddock.ExecResult{}, a.execError(dl, err)
	}
	st, err := a.startProcess(ctx, id, cmd, launch{})
	if err != nil {
		return paddock.ExecResult{}, a.execError(dl, err)
	}
	st.kill = true
	defer st.Close()
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			return paddock.ExecResult{}, a.execError(dl, err)
		}
		switch ev.Kind {
		case paddock.EventExit:
			if dl.Finite() && dl.Expired() {
				return paddock.ExecResult{}, dl.Err() // an exit read after the deadline is the timeout
			}
			return out.Result(ev.Code), nil
		case paddock.EventError:
			return paddock.ExecResult{}, ev.Err
		}
		if err := out.Add(ev.Kind, ev.Data); err != nil {
			return paddock.ExecResult{}, err // Close kills the process
		}
	}
}

// execError is the deadline's error once it passed, else err.
func (a *Adapter) execError(dl paddock.ExecDeadline, err error) error {
	if dl.Finite() && dl.Expired() {
		return dl.Err()
	}
	return err
}
