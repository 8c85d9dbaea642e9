package e2b

import (
	"context"

	"github.com/paddockhq/paddock"
)

// Exec runs cmd to completion under one deadline: at the deadline the
// process is killed (on E2B it would outlive its request) and the timeout
// answered. Output is held up to the cap.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(ctx, cmd, opts, a.cfg.Exec, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	if !textOnly(cmd) {
		return paddock.ExecResult{}, &paddock.InvalidError{Detail: paddock.DetailCommand + ": E2B carries arguments as UTF-8 text"}
	}
	ctx, cancel := dl.Context(ctx)
	defer cancel()
	restored := a.restores.Since(h.Name) // before the lookup: a restore may replace the sandbox found
	id, err := a.running(ctx, h)
	if err != nil {
		return paddock.ExecResult{}, a.execError(dl, err)
	}
	st, err := a.startProcess(ctx, id, cmd, launch{})
	if err != nil {
		return paddock.ExecResult{}, a.execError(dl, err)
	}
	st.kill, st.restored = true, restored
	defer st.Close() // kills the process unless it ended
	return paddock.CollectExec(ctx, st, dl, out, nil)
}

func (a *Adapter) execError(dl paddock.ExecDeadline, err error) error {
	if dl.Finite() && dl.Expired() {
		return dl.Err()
	}
	return err
}

// ExecLimits are the bounds of Exec's timeouts the adapter was configured
// with, under which the runtime fixes each exec's deadline.
func (a *Adapter) ExecLimits() paddock.ExecLimits { return a.cfg.Exec }
