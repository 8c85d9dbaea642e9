package perf

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
)

// Isolation modes of the local figures.
const (
	Unisolated = local.IsolationNone
	Isolated   = local.IsolationAuto // namespaces where the machine allows them
)

// newLocal makes a local adapter on a fresh root; done removes it.
func newLocal(mode local.Isolation) (*local.Adapter, func(), error) {
	a, err := local.New(local.Config{TempRoot: true, Isolation: mode})
	if err != nil {
		return nil, nil, err
	}
	return a, func() { _ = a.Close() }, nil
}

// LocalStdoutRates are LocalStdout's two sides, in MB/s, the median of the
// runs' ratios (runtime/os-exec), and whether the adapter ran the command
// in namespaces.
type LocalStdoutRates struct {
	OSExec, Runtime, Ratio float64
	Ratios                 []float64 // each run's, in order
	Isolated               bool
}

// LocalStdout reads argv's stdout through the runtime on the local
// adapter (journal, command actor, channel) and with plain os/exec,
// alternating, runs times each after one run of each that warms up and is
// not counted; the byte counts must agree.
func LocalStdout(argv []string, runs int, mode local.Isolation) (LocalStdoutRates, error) {
	a, done, err := newLocal(mode)
	if err != nil {
		return LocalStdoutRates{}, err
	}
	defer done()
	rt, h, stop, err := startRuntime(paddock.ProviderLocal, a)
	if err != nil {
		return LocalStdoutRates{}, err
	}
	defer stop()
	plain := func() (int64, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		n, _ := io.Copy(io.Discard, out)
		return n, cmd.Wait()
	}
	runtimeSide := func() (int64, error) { return spawnAndCount(rt, h, paddock.NewCmd(argv[0], argv[1:]...)) }
	var raw, through time.Duration
	var rawBytes, throughBytes int64
	ratios := make([]float64, 0, runs)
	for run := range runs + 1 { // run 0 warms both sides up and is not counted
		start := time.Now()
		n, err := plain()
		if err != nil {
			return LocalStdoutRates{}, err
		}
		plainTook := time.Since(start)
		start = time.Now()
		m, err := runtimeSide()
		if err != nil {
			return LocalStdoutRates{}, err
		}
		if run > 0 {
			took := time.Since(start)
			raw, rawBytes = raw+plainTook, rawBytes+n
			through, throughBytes = through+took, throughBytes+m
			ratios = append(ratios, plainTook.Seconds()/took.Seconds())
		}
	}
	if rawBytes != throughBytes {
		return LocalStdoutRates{}, fmt.Errorf("byte counts differ: os/exec %d, the runtime %d", rawBytes, throughBytes)
	}
	mbps := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() / (1 << 20) }
	isolated, _ := a.Isolated()
	return LocalStdoutRates{OSExec: mbps(rawBytes, raw), Runtime: mbps(throughBytes, through), Ratio: median(ratios), Ratios: ratios, Isolated: isolated}, nil
}

// LocalStdoutFigure is LocalStdout as a figure, the median of the runs'
// runtime/os-exec against goal and aim; the name says whether the command
// ran in namespaces.
func LocalStdoutFigure(name string, argv []string, runs int, mode local.Isolation, goal, aim float64) (Figure, error) {
	r, err := LocalStdout(argv, runs, mode)
	if err != nil {
		return Figure{}, err
	}
	if r.Isolated {
		name += ", in namespaces"
	} else {
		name += ", unisolated"
	}
	f := Figure{Name: name, Unit: "runtime/os-exec", Value: r.Ratio,
		Measured: fmt.Sprintf("%.0f vs %.0f MB/s (runs: %s)", r.Runtime, r.OSExec, runRatios(r.Ratios)),
		Details:  map[string]float64{"runtime_mb_per_s": r.Runtime, "os_exec_mb_per_s": r.OSExec}}
	atLeast(&f, goal)
	aimAtLeast(&f, aim)
	return f, nil
}

// ExecTrueTimes are the median microseconds of Exec of true, three ways.
type ExecTrueTimes struct {
	OSExec, Adapter, Runtime float64
	Isolated                 bool // the adapter ran its commands in namespaces
}

// ExecTrue times Exec of `true` in one sandbox three ways, interleaved:
// plain os/exec, the adapter's own Exec, and the runtime's. Each way's
// figure is the median of its samples, so that a few execs slowed by
// whatever else the machine runs do not decide it (CI measured right
// after its heavy tests, and a mean then missed the goal by outliers).
func ExecTrue(iterations int, mode local.Isolation) (ExecTrueTimes, error) {
	a, done, err := newLocal(mode)
	if err != nil {
		return ExecTrueTimes{}, err
	}
	defer done()
	rt, h, stop, err := startRuntime(paddock.ProviderLocal, a)
	if err != nil {
		return ExecTrueTimes{}, err
	}
	defer stop()
	ctx := context.Background()
	cmd := paddock.NewCmd("true")
	plain, adapter, through := make([]float64, 0, iterations), make([]float64, 0, iterations), make([]float64, 0, iterations)
	us := func(start time.Time) float64 { return float64(time.Since(start)) / float64(time.Microsecond) }
	for range iterations {
		start := time.Now()
		if err := exec.Command("true").Run(); err != nil {
			return ExecTrueTimes{}, err
		}
		plain = append(plain, us(start))

		start = time.Now()
		if res, err := a.Exec(ctx, h, cmd, paddock.ExecOpts{}); err != nil || res.ExitCode != 0 {
			return ExecTrueTimes{}, fmt.Errorf("adapter exec: %v (exit %d)", err, res.ExitCode)
		}
		adapter = append(adapter, us(start))

		start = time.Now()
		if res, err := rt.Adapter(h.Provider).Exec(ctx, h, cmd, paddock.ExecOpts{}); err != nil || res.ExitCode != 0 {
			return ExecTrueTimes{}, fmt.Errorf("runtime exec: %v (exit %d)", err, res.ExitCode)
		}
		through = append(through, us(start))
	}
	isolated, _ := a.Isolated()
	return ExecTrueTimes{OSExec: median(plain), Adapter: median(adapter), Runtime: median(through), Isolated: isolated}, nil
}

// Goal is the runtime's ceiling for t: 1.3 x os/exec + 300 us
// unisolated, 2 x os/exec + 300 us in namespaces.
func (t ExecTrueTimes) Goal() (us float64, text string) {
	if t.Isolated {
		return 2*t.OSExec + 300, "<= 2 x os/exec + 300 us"
	}
	return 1.3*t.OSExec + 300, "<= 1.3 x os/exec + 300 us"
}

// ExecTrueFigure is ExecTrue as a figure.
func ExecTrueFigure(iterations int, mode local.Isolation) (Figure, error) {
	t, err := ExecTrue(iterations, mode)
	if err != nil {
		return Figure{}, err
	}
	goal, text := t.Goal()
	how := "unisolated"
	if t.Isolated {
		how = "in namespaces"
	}
	return Figure{Name: "exec of true through the runtime, " + how + ", vs os/exec", Unit: "us", Value: t.Runtime,
		Measured: fmt.Sprintf("%.0f vs %.0f us (the adapter alone: %.0f)", t.Runtime, t.OSExec, t.Adapter),
		Goal:     fmt.Sprintf("%s (%.0f us)", text, goal), Holds: t.Runtime <= goal,
		Details: map[string]float64{"runtime_us": t.Runtime, "os_exec_us": t.OSExec, "adapter_us": t.Adapter, "goal_us": goal}}, nil
}

// runRatios prints each run's ratio, so that one slow run shows beside the
// median.
func runRatios(ratios []float64) string {
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(parts, " ")
}
