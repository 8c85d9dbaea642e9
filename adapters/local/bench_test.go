//go:build unix

package local_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/internal/perf"
)

// BenchmarkStream streams a command's stdout through the runtime on this
// adapter (session journal, command actor, channel) and, in the same run,
// reads the same command with plain os/exec, and reports both rates and
// their ratio.
func BenchmarkStream(b *testing.B) {
	cases := map[string][]string{
		"zeros-256MiB":  {"head", "-c", "268435456", "/dev/zero"},
		"lines-~100MiB": {"seq", "1", "13000000"},
	}
	for name, argv := range cases {
		b.Run(name, func(b *testing.B) {
			for mode, opt := range benchModes() {
				b.Run(mode, func(b *testing.B) { benchStream(b, argv, opt) })
			}
		})
	}
}

// benchModes are the isolation modes the benchmarks compare.
func benchModes() map[string]local.Isolation {
	return map[string]local.Isolation{"unisolated": local.IsolationNone, "auto": local.IsolationAuto}
}

func benchStream(b *testing.B, argv []string, opt local.Isolation) {
	r, err := perf.LocalStdout(argv, b.N, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.OSExec, "os/exec-MB/s")
	b.ReportMetric(r.Runtime, "runtime-MB/s")
	b.ReportMetric(r.Ratio, "runtime/os-exec")
}

// BenchmarkTurns runs 100 and 500 agent turns at once (create a sandbox,
// Exec `seq 1 3000`, Spawn `seq 1 20000` and read it all, destroy) through
// the runtime on this adapter, and in the same run the same turns with
// plain os/exec (a directory, the two commands, removal). It reports
// turns per second and the p50 and p99 turn latency of both, and the
// ratio of their rates (runtime/os-exec).
func BenchmarkTurns(b *testing.B) {
	for _, turns := range []int{100, 500} {
		for mode, opt := range benchModes() {
			b.Run(fmt.Sprintf("%d-turns/%s", turns, mode), func(b *testing.B) { benchTurns(b, turns, opt) })
		}
	}
}

func benchTurns(b *testing.B, turns int, opt local.Isolation) {
	rt := startRuntime(b, newLocal(b, withIsolation(opt)))
	fixtures := conformance.ShellFixtures()
	var through, plain conformance.LoadReport
	for range b.N {
		plain = merge(plain, osExecTurns(b, turns, fixtures))
		r := conformance.RunLoad(ctx, rt.Adapter(paddock.ProviderLocal), fixtures, paddock.SpawnOpts{}, turns, nil)
		if r.Failed > 0 || len(r.LeftBehind) > 0 {
			b.Fatalf("turns went wrong: %s", r)
		}
		through = merge(through, r)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(plain.TurnsPerSecond(), "os/exec-turns/s")
	b.ReportMetric(ms(plain.Percentile(0.5)), "os/exec-p50-ms")
	b.ReportMetric(ms(plain.Percentile(0.99)), "os/exec-p99-ms")
	b.ReportMetric(through.TurnsPerSecond(), "runtime-turns/s")
	b.ReportMetric(ms(through.Percentile(0.5)), "runtime-p50-ms")
	b.ReportMetric(ms(through.Percentile(0.99)), "runtime-p99-ms")
	b.ReportMetric(through.TurnsPerSecond()/plain.TurnsPerSecond(), "runtime/os-exec")
}

// merge adds r's turns to sum.
func merge(sum, r conformance.LoadReport) conformance.LoadReport {
	sum.Turns += r.Turns
	sum.Failed += r.Failed
	sum.Elapsed += r.Elapsed
	sum.Latencies = append(sum.Latencies, r.Latencies...)
	slices.Sort(sum.Latencies)
	return sum
}

// osExecTurns is the baseline: the same turns with nothing but os/exec.
func osExecTurns(b *testing.B, turns int, f conformance.Fixtures) conformance.LoadReport {
	root := b.TempDir()
	var (
		mu     sync.Mutex
		report = conformance.LoadReport{Turns: turns}
		wg     sync.WaitGroup
		gate   = make(chan struct{})
	)
	for i := range turns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			start := time.Now()
			err := osExecTurn(filepath.Join(root, strconv.Itoa(i)), f)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				b.Errorf("os/exec turn: %v", err)
				report.Failed++
				return
			}
			report.Latencies = append(report.Latencies, took)
		}()
	}
	start := time.Now()
	close(gate)
	wg.Wait()
	report.Elapsed = time.Since(start)
	slices.Sort(report.Latencies)
	return report
}

func osExecTurn(dir string, f conformance.Fixtures) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	run := func(c paddock.Cmd) *exec.Cmd {
		cmd := exec.Command(c.Path, c.Args...)
		cmd.Dir = dir
		return cmd
	}
	out, err := run(f.ExecBulk.Cmd).Output()
	if err != nil || !bytes.Equal(out, f.ExecBulk.Output) {
		return fmt.Errorf("exec: %d bytes, %v", len(out), err)
	}
	cmd := run(f.SpawnBulk.Cmd)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	out, err = io.ReadAll(pipe)
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	if err != nil || !bytes.Equal(out, f.SpawnBulk.Output) {
		return fmt.Errorf("spawn: %d bytes, %v", len(out), err)
	}
	return nil
}

// BenchmarkExecTrue times Exec of `true` in one sandbox three ways,
// interleaved in the same run: plain os/exec, the adapter's own Exec, and
// the runtime's Exec on the adapter. It reports each mean and the runtime's
// ratio, and its excess over the goal (runtime <= 1.3 x os/exec + 300 us
// unisolated, <= 2 x os/exec + 300 us isolated): at most 0 meets it.
func BenchmarkExecTrue(b *testing.B) {
	for mode, opt := range benchModes() {
		b.Run(mode, func(b *testing.B) {
			t, err := perf.ExecTrue(b.N, opt)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(t.OSExec, "os/exec-us")
			b.ReportMetric(t.Adapter, "adapter-us")
			b.ReportMetric(t.Runtime, "runtime-us")
			b.ReportMetric(t.Adapter/t.OSExec, "adapter/os-exec")
			b.ReportMetric(t.Runtime/t.OSExec, "runtime/os-exec")
			goal, _ := t.Goal()
			b.ReportMetric(t.Runtime-goal, "runtime-over-goal-us")
		})
	}
}

// BenchmarkExecOutputCap runs an exec that prints 200 MB under the default
// output cap (64 MiB), through the adapter and through the runtime, and
// reports the heap's peak above its base for each, in MiB and as a ratio
// to the cap (the promise: the cap plus a constant).
func BenchmarkExecOutputCap(b *testing.B) {
	a := newLocal(b)
	rt := startRuntime(b, a)
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "bench", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	cmd := paddock.NewCmd("sh", "-c", "head -c 200000000 /dev/zero")
	measure := func(exec func() error) float64 {
		base := heapObjects()
		peak := watchHeap(b)
		if err := exec(); !errors.Is(err, paddock.ErrExecOutputLimit) {
			b.Fatalf("want exec_output_limit, got %v", err)
		}
		return float64(int64(peak())-int64(base)) / (1 << 20)
	}
	var adapter, through float64
	for range b.N {
		adapter = max(adapter, measure(func() error { _, err := a.Exec(ctx, h, cmd, paddock.ExecOpts{}); return err }))
		through = max(through, measure(func() error { _, err := rt.Adapter(h.Provider).Exec(ctx, h, cmd, paddock.ExecOpts{}); return err }))
	}
	capMiB := float64(paddock.DefaultExecMaxOutput) / (1 << 20)
	b.ReportMetric(capMiB, "cap-MiB")
	b.ReportMetric(adapter, "adapter-peak-MiB")
	b.ReportMetric(through, "runtime-peak-MiB")
	b.ReportMetric(through/capMiB, "runtime-peak/cap")
}
