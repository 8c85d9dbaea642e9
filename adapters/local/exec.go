package local

import (
	"context"
	"sync"

	"github.com/paddockhq/paddock"
)

var _ paddock.ExecLimiter = (*Adapter)(nil)

// Exec runs cmd to completion without a journal: stdout and stderr apart
// (or merged in arrival order) under the output cap and the adapter's
// timeout limits. On the deadline, or past the cap, the command's
// processes are killed, not merely abandoned.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(ctx, cmd, opts, a.execLimits, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	m, err := a.readMeta(h.Name)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	spec, err := a.spec(m, cmd, false, false)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	proc, err := a.runIn(a.dirOf(h.Name), m, randomID("x-"), spec)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	var (
		mu       sync.Mutex
		overErr  error
		overflow = make(chan struct{})
	)
	done := proc.read(func(kind byte, p []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if overErr != nil {
			return false
		}
		if overErr = out.Add(outputKind(kind), p); overErr != nil {
			close(overflow)
		}
		return false // Add copied it
	})
	type result struct {
		code           int
		lost, complete bool
	}
	stop := make(chan struct{})
	finished := make(chan result, 1)
	go func() {
		code, lost, complete := proc.finish(done, a.drain, stop)
		finished <- result{code, lost, complete}
	}()
	var r result
	select {
	case r = <-finished:
	case <-overflow:
		close(stop)
		<-finished
		return paddock.ExecResult{}, paddock.ErrExecOutputLimit
	case <-dl.C():
		close(stop)
		<-finished
		return paddock.ExecResult{}, dl.Err()
	case <-ctx.Done():
		close(stop)
		<-finished
		return paddock.ExecResult{}, unavailable("exec", ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock() // a reader left behind by output_truncated adds nothing more
	switch {
	case overErr != nil:
		return paddock.ExecResult{}, overErr
	case !r.complete:
		return paddock.ExecResult{}, paddock.ErrOutputTruncated
	case r.lost:
		return paddock.ExecResult{}, paddock.ErrClosedBeforeExit
	case dl.Finite() && dl.Expired():
		return paddock.ExecResult{}, dl.Err()
	}
	return out.Result(r.code), nil
}

// outputKind is the event kind of an output record kind.
func outputKind(rec byte) paddock.EventKind {
	if rec == recStderr {
		return paddock.EventStderr
	}
	return paddock.EventStdout
}

// ExecLimits are the bounds of Exec's timeouts the adapter was configured
// with, under which the runtime fixes each exec's deadline.
func (a *Adapter) ExecLimits() paddock.ExecLimits { return a.execLimits }
