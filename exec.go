package paddock

import (
	"context"
	"time"
)

// DefaultExecMaxOutput is the output cap of an Exec that sets none: 64 MiB
// of stdout and stderr together.
const DefaultExecMaxOutput = 64 << 20

// ExecOpts are the options of Exec.
type ExecOpts struct {
	// Timeout bounds local collection of the result with one monotonic
	// deadline (docs/contract.md#exec-deadlines): nil = the adapter's
	// default (ExecLimits; no limit unless one is configured); a pointer to
	// zero answers the timeout error at once, without starting anything; a
	// negative value is invalid. A timeout above the adapter's ceiling is
	// clamped to it, and ExecResult.Timeout says so. Expiry is reported as
	// *ExecTimeoutError carrying the timeout the exec ran under.
	Timeout *time.Duration
	// StderrToStdout interleaves stderr into Stdout in arrival order;
	// otherwise stderr is kept apart in Stderr.
	StderrToStdout bool
	// MaxOutput caps the bytes of stdout and stderr together that Exec
	// holds: 0 = DefaultExecMaxOutput; negative is invalid. A command that
	// prints more is stopped and Exec answers ErrExecOutputLimit (use Spawn
	// to stream output of any size).
	MaxOutput int64
}

// Validate reports an *InvalidError with detail exec_options for a negative
// timeout or output cap.
func (o ExecOpts) Validate() error {
	if o.Timeout != nil && *o.Timeout < 0 {
		return &InvalidError{Detail: DetailExecOptions + ": negative timeout"}
	}
	if o.MaxOutput < 0 {
		return &InvalidError{Detail: DetailExecOptions + ": negative output cap"}
	}
	return nil
}

// OutputCap is the cap in force: MaxOutput, or DefaultExecMaxOutput.
func (o ExecOpts) OutputCap() int64 {
	if o.MaxOutput == 0 {
		return DefaultExecMaxOutput
	}
	return o.MaxOutput
}

// ExecResult is a finished command's output and exit code. A nonzero exit
// code is data, not an error.
type ExecResult struct {
	// Stdout is the command's stdout, with stderr interleaved in arrival
	// order when ExecOpts.StderrToStdout is set.
	Stdout []byte `json:"stdout"`
	// Stderr is the command's stderr; empty when merged into Stdout.
	Stderr   []byte `json:"stderr"`
	ExitCode int    `json:"exit_code"`
	// Timeout is the timeout the command ran under: the one requested, the
	// adapter's default when none was, or its ceiling when the request was
	// longer. Nil: none.
	Timeout *time.Duration `json:"timeout,omitempty"`
}

// ExecLimits are an adapter's bounds on the timeouts of Exec. Both are
// off by default, as the contract's default timeout is infinite.
type ExecLimits struct {
	// DefaultTimeout is the timeout of an exec that sets none; 0 = none.
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout granted: a longer request, or no
	// timeout at all, runs under it instead; 0 = no ceiling.
	MaxTimeout time.Duration
}

// Validate reports an *InvalidError with detail exec_options for a
// negative limit or a default above the ceiling.
func (l ExecLimits) Validate() error {
	switch {
	case l.DefaultTimeout < 0 || l.MaxTimeout < 0:
		return &InvalidError{Detail: DetailExecOptions + ": negative exec limit"}
	case l.MaxTimeout > 0 && l.DefaultTimeout > l.MaxTimeout:
		return &InvalidError{Detail: DetailExecOptions + ": default timeout above the ceiling"}
	}
	return nil
}

// Timeout is the timeout an exec requesting requested runs under.
func (l ExecLimits) Timeout(requested *time.Duration) *time.Duration {
	t := requested
	if t == nil && l.DefaultTimeout > 0 {
		t = Duration(l.DefaultTimeout)
	}
	if l.MaxTimeout > 0 && (t == nil || *t > l.MaxTimeout) {
		t = Duration(l.MaxTimeout)
	}
	return t
}

// ValidateExec validates an Exec request.
func ValidateExec(cmd Cmd, opts ExecOpts) error {
	if err := cmd.Validate(); err != nil {
		return err
	}
	return opts.Validate()
}

// StartExec validates an Exec request and fixes its one deadline
// (docs/contract.md#exec-deadlines): the one ctx carries, when the caller
// fixed it already (the runtime does, on its clock, under the adapter's
// limits: WithExecDeadline), else one fixed now under limits (clock nil =
// the system clock). A budget that is already spent (a zero timeout)
// answers the timeout error at once, before anything is started or even
// looked up. Invalid limits make the request invalid. The returned
// ExecOutput collects the output under the request's cap.
func StartExec(ctx context.Context, cmd Cmd, opts ExecOpts, limits ExecLimits, clock Clock) (ExecDeadline, *ExecOutput, error) {
	if err := ValidateExec(cmd, opts); err != nil {
		return ExecDeadline{}, nil, err
	}
	if err := limits.Validate(); err != nil {
		return ExecDeadline{}, nil, err
	}
	dl, fixed := ctx.Value(execDeadlineKey{}).(ExecDeadline)
	if !fixed {
		dl = StartExecDeadline(limits.Timeout(opts.Timeout), clock)
	}
	if dl.Finite() && dl.Expired() {
		return dl, nil, dl.Err()
	}
	return dl, &ExecOutput{merge: opts.StderrToStdout, room: opts.OutputCap(), timeout: dl.timeout}, nil
}

// execDeadlineKey is the context key of a deadline fixed by the caller.
type execDeadlineKey struct{}

// WithExecDeadline returns ctx carrying dl, so that the Exec called with it
// runs under dl rather than fix a deadline of its own: the deadline is
// worked out once, by whoever admitted the request first.
func WithExecDeadline(ctx context.Context, dl ExecDeadline) context.Context {
	return context.WithValue(ctx, execDeadlineKey{}, dl)
}

// ExecLimiter is implemented by adapters whose Exec runs under limits of
// their own, so that the runtime fixes each exec's deadline under them.
type ExecLimiter interface {
	ExecLimits() ExecLimits
}

// LimitsOf are a's exec limits: none unless it is an ExecLimiter.
func LimitsOf(a Adapter) ExecLimits {
	if l, ok := a.(ExecLimiter); ok {
		return l.ExecLimits()
	}
	return ExecLimits{}
}

// EventSource is what CollectExec reads: a Stream, or an adapter's own
// reader of a command's output shaped like one.
type EventSource interface {
	Next(ctx context.Context) (Event, error)
}

// CollectExec reads src to its terminal event under the exec's one
// deadline and its output cap, and answers the result: the exit the source
// reports (an exit read once the deadline passed is the deadline's error),
// the source's error event, ErrExecOutputLimit past the cap, or the
// deadline's error when the source failed because the deadline passed.
// fail maps any other failure of Next to the taxonomy (nil: as it is).
// ctx should end with the deadline (dl.Context); the caller closes src,
// which must stop the command when it has not ended.
func CollectExec(ctx context.Context, src EventSource, dl ExecDeadline, out *ExecOutput, fail func(error) error) (ExecResult, error) {
	for {
		ev, err := src.Next(ctx)
		switch {
		case err != nil && dl.Finite() && dl.Expired():
			return ExecResult{}, dl.Err()
		case err != nil && fail != nil:
			return ExecResult{}, fail(err)
		case err != nil:
			return ExecResult{}, err
		}
		switch ev.Kind {
		case EventExit:
			if dl.Finite() && dl.Expired() {
				return ExecResult{}, dl.Err()
			}
			return out.Result(ev.Code), nil
		case EventError:
			return ExecResult{}, ev.Err
		}
		if err := out.Add(ev.Kind, ev.Data); err != nil {
			return ExecResult{}, err
		}
	}
}

// ExecOutput collects an Exec's output under its cap: stdout and stderr
// apart, or stderr interleaved into stdout when the options merge them.
// While collecting it holds the output in blocks, never more than the cap
// plus one block, and no garbage of regrown buffers; Result joins each
// stream once. It is not safe for concurrent use.
type ExecOutput struct {
	merge          bool
	room           int64 // bytes still allowed
	stdout, stderr blocks
	timeout        *time.Duration
}

// Add appends a chunk of stdout or stderr (other kinds are ignored). Past
// the cap it keeps nothing more, releases what it held and answers
// ErrExecOutputLimit; the caller stops the command.
func (o *ExecOutput) Add(kind EventKind, p []byte) error {
	if kind != EventStdout && kind != EventStderr {
		return nil
	}
	if int64(len(p)) > o.room {
		o.stdout, o.stderr, o.room = blocks{}, blocks{}, 0
		return ErrExecOutputLimit
	}
	o.room -= int64(len(p))
	if kind == EventStdout || o.merge {
		o.stdout.write(p)
	} else {
		o.stderr.write(p)
	}
	return nil
}

// Result is the finished exec's result with exit code code.
func (o *ExecOutput) Result(code int) ExecResult {
	return ExecResult{Stdout: o.stdout.join(), Stderr: o.stderr.join(), ExitCode: code, Timeout: o.timeout}
}

// Len is how many bytes are held.
func (o *ExecOutput) Len() int { return o.stdout.n + o.stderr.n }

// Block sizes of collected output: small outputs stay small, large ones
// cost one allocation per maxBlock.
const (
	minBlock = 512
	maxBlock = 64 << 10
)

// blocks is output held in blocks that double in size up to maxBlock.
type blocks struct {
	list [][]byte
	n    int
}

func (b *blocks) write(p []byte) {
	b.n += len(p)
	for len(p) > 0 {
		last := len(b.list) - 1
		if last < 0 || len(b.list[last]) == cap(b.list[last]) {
			size := minBlock
			if last >= 0 {
				size = min(2*cap(b.list[last]), maxBlock)
			}
			b.list = append(b.list, make([]byte, 0, max(size, min(len(p), maxBlock))))
			last++
		}
		n := min(len(p), cap(b.list[last])-len(b.list[last]))
		b.list[last] = append(b.list[last], p[:n]...)
		p = p[n:]
	}
}

// join returns the bytes in one slice (nil when empty).
func (b *blocks) join() []byte {
	switch len(b.list) {
	case 0:
		return nil
	case 1:
		return b.list[0]
	}
	out := make([]byte, 0, b.n)
	for _, blk := range b.list {
		out = append(out, blk...)
	}
	return out
}
