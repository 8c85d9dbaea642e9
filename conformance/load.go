package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
)

// LoadReport is what one load run measured.
type LoadReport struct {
	Turns   int           // turns started
	Failed  int           // turns that went wrong in any way
	Elapsed time.Duration // from the first turn's start to the last turn's end
	// Latencies are the durations of the turns that succeeded, ascending.
	Latencies []time.Duration
	// Failures describe the first failed turns (at most maxReported).
	Failures []string
	// LeftBehind are the sandboxes of this run still listed by ListAllNames
	// after every turn destroyed its own.
	LeftBehind []string
}

// maxReported bounds LoadReport.Failures.
const maxReported = 20

// cleanupTimeout bounds a turn's Destroy and the final listing, which run
// even when the run's context has ended, so nothing is left behind silently.
const cleanupTimeout = time.Minute

// Percentile is the latency below which the fraction p (0..1) of the
// successful turns finished; 0 when none succeeded.
func (r LoadReport) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(p * float64(len(r.Latencies)-1))
	return r.Latencies[max(0, min(i, len(r.Latencies)-1))]
}

// TurnsPerSecond is the successful turns over the elapsed time.
func (r LoadReport) TurnsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// String summarises the report, with the first failures.
func (r LoadReport) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d turns, %d failed, %d sandboxes left behind, %.1f turns/s, p50 %s, p99 %s",
		r.Turns, r.Failed, len(r.LeftBehind), r.TurnsPerSecond(),
		r.Percentile(0.5).Round(time.Millisecond), r.Percentile(0.99).Round(time.Millisecond))
	for _, f := range r.Failures {
		b.WriteString("\n  ")
		b.WriteString(f)
	}
	if len(r.LeftBehind) > 0 {
		fmt.Fprintf(&b, "\n  left behind: %v", r.LeftBehind[:min(len(r.LeftBehind), maxReported)])
	}
	return b.String()
}

// RunLoad runs turns agent turns against a at once, each in a sandbox of
// its own named by name: Create, Exec of f.ExecBulk (its exact output and
// exit 0), Spawn of f.SpawnBulk with opts (its exact stdout, then exactly
// one terminal event, exit 0, then the end of the stream), Destroy. Then it
// lists the account and reports the run's sandboxes still there. ctx bounds
// the whole run. It is the load case of the suite, exported for stress tests
// and benchmarks.
func RunLoad(ctx context.Context, a paddock.Adapter, f Fixtures, opts paddock.SpawnOpts, turns int, name func() string) LoadReport {
	if name == nil {
		name = nameMinter()
	}
	opts.Stdin, opts.Name = false, ""
	names := make([]string, turns)
	for i := range names {
		names[i] = name()
	}
	var (
		mu     sync.Mutex
		report = LoadReport{Turns: turns}
		wg     sync.WaitGroup
		gate   = make(chan struct{})
	)
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			start := time.Now()
			err := turn(ctx, a, f, opts, n)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				report.Latencies = append(report.Latencies, took)
				return
			}
			report.Failed++
			if len(report.Failures) < maxReported {
				report.Failures = append(report.Failures, n+": "+err.Error())
			}
		}()
	}
	start := time.Now()
	close(gate)
	wg.Wait()
	report.Elapsed = time.Since(start)
	slices.Sort(report.Latencies)
	report.LeftBehind = leftBehind(ctx, a, names)
	return report
}

// turn is one agent turn in a sandbox of its own.
func turn(ctx context.Context, a paddock.Adapter, f Fixtures, opts paddock.SpawnOpts, name string) (err error) {
	h, err := a.Create(ctx, name, paddock.CreateOpts{})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if derr := a.Destroy(dctx, h); derr != nil && err == nil {
			err = fmt.Errorf("destroy: %w", derr)
		}
	}()
	res, err := a.Exec(ctx, h, f.ExecBulk.Cmd, paddock.ExecOpts{})
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if res.ExitCode != 0 || !bytes.Equal(res.Stdout, f.ExecBulk.Output) {
		return fmt.Errorf("exec: exit %d with %d bytes %s; want exit 0 with %d bytes",
			res.ExitCode, len(res.Stdout), difference(res.Stdout, f.ExecBulk.Output), len(f.ExecBulk.Output))
	}
	st, err := a.Spawn(ctx, h, f.SpawnBulk.Cmd, opts)
	if err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	defer st.Close()
	return readWhole(ctx, st, f.SpawnBulk.Output)
}

// readWhole reads st to its end and requires exactly want on stdout, then
// one terminal event, exit 0, then io.EOF (nothing after the terminal).
func readWhole(ctx context.Context, st paddock.Stream, want []byte) error {
	var out []byte
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			return fmt.Errorf("spawn: after %d of %d bytes, no terminal event: %w", len(out), len(want), err)
		}
		switch {
		case ev.Kind == paddock.EventStdout:
			out = append(out, ev.Data...)
			continue
		case ev.Kind == paddock.EventStderr:
			continue
		case ev.Kind == paddock.EventError:
			return fmt.Errorf("spawn: error event after %d of %d bytes: %v", len(out), len(want), ev.Err)
		case ev.Kind != paddock.EventExit:
			return fmt.Errorf("spawn: unknown event kind %s", ev.Kind)
		}
		if ev.Code != 0 || !bytes.Equal(out, want) {
			return fmt.Errorf("spawn: exit %d after %d bytes %s; want exit 0 after %d bytes",
				ev.Code, len(out), difference(out, want), len(want))
		}
		break
	}
	ev, err := st.Next(ctx)
	switch {
	case err == nil:
		return fmt.Errorf("spawn: a %s event after the terminal event", ev.Kind)
	case !errors.Is(err, io.EOF):
		return fmt.Errorf("spawn: the stream did not end after its terminal event: %w", err)
	}
	return nil
}

// difference says where got first differs from want.
func difference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) && i == len(want) {
		return "(equal)"
	}
	return fmt.Sprintf("(first difference at byte %d)", i)
}

// leftBehind lists which of names the account still has.
func leftBehind(ctx context.Context, a paddock.Adapter, names []string) []string {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	listed, err := a.ListAllNames(lctx)
	if err != nil {
		return []string{"(ListAllNames failed: " + err.Error() + ")"}
	}
	have := make(map[string]bool, len(listed))
	for _, n := range listed {
		have[n] = true
	}
	var out []string
	for _, n := range names {
		if have[n] {
			out = append(out, n)
		}
	}
	return out
}
