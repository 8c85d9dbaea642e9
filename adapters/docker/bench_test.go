package docker_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
)

// cli runs the docker command line against the same engine.
func cli(b *testing.B, args ...string) {
	b.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		b.Fatalf("docker %v: %v: %s", args, err, out)
	}
}

// cliRunArgs is `docker run` with the flags the adapter uses, so both
// sides start the same container.
func cliRunArgs(name, image string) []string {
	return []string{"run", "-d", "--name", name, "--runtime", "runc", "--init", "--read-only", "--cap-drop", "ALL",
		"--security-opt", "no-new-privileges", "--user", "1000:1000", "--cpus", "1", "--memory", "256m",
		"--memory-swap", "256m", "--pids-limit", "128", "--network", "none", "--restart", "no",
		"--tmpfs", "/tmp:rw,nosuid,nodev,noexec,size=33554432,mode=1777",
		"--tmpfs", "/workspace:rw,nosuid,nodev,noexec,size=33554432,mode=0777",
		"--tmpfs", "/run/paddock:rw,nosuid,nodev,noexec,size=65536,mode=0755",
		"--entrypoint", "/bin/sh", image, "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"}
}

// BenchmarkLatency measures, in one run, each operation through the
// adapter and the same operation through the docker CLI, alternating,
// and reports both means and their ratio (adapter/cli).
func BenchmarkLatency(b *testing.B) {
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("the docker CLI is the baseline and is not installed")
	}
	a := newAdapter(b)
	image := requireEngine(b)
	ctx := context.Background()

	b.Run("create-to-first-exec", func(b *testing.B) {
		var adapter, baseline time.Duration
		for i := 0; b.Loop(); i++ {
			name := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)
			start := time.Now()
			h, err := a.Create(ctx, name, paddock.CreateOpts{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{}); err != nil {
				b.Fatal(err)
			}
			adapter += time.Since(start)
			b.StopTimer()
			if err := a.Destroy(ctx, h); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()

			start = time.Now()
			cli(b, cliRunArgs(name+"-cli", image)...)
			cli(b, "exec", name+"-cli", "true")
			baseline += time.Since(start)
			b.StopTimer()
			cli(b, "rm", "-f", name+"-cli")
			b.StartTimer()
		}
		report(b, adapter, baseline)
	})

	b.Run("exec-round-trip", func(b *testing.B) {
		name := fmt.Sprintf("bench-exec-%d", time.Now().UnixNano())
		h, err := a.Create(ctx, name, paddock.CreateOpts{})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = a.Destroy(context.Background(), h) }()
		var adapter, baseline time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{}); err != nil {
				b.Fatal(err)
			}
			adapter += time.Since(start)
			start = time.Now()
			cli(b, "exec", docker.ContainerName(name), "true")
			baseline += time.Since(start)
		}
		report(b, adapter, baseline)
	})
}

func report(b *testing.B, adapter, baseline time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(adapter.Milliseconds())/n, "adapter-ms/op")
	b.ReportMetric(float64(baseline.Milliseconds())/n, "cli-ms/op")
	b.ReportMetric(float64(adapter)/float64(baseline), "adapter/cli")
}
