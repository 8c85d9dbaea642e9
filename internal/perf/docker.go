package perf

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
)

// DockerCLIRunArgs is `docker run` with the flags the adapter's own
// containers get, so both sides start the same container.
func DockerCLIRunArgs(name, image string) []string {
	return []string{"run", "-d", "--name", name, "--runtime", "runc", "--init", "--read-only", "--cap-drop", "ALL",
		"--security-opt", "no-new-privileges", "--user", "1000:1000", "--cpus", "1", "--memory", "256m",
		"--memory-swap", "256m", "--pids-limit", "128", "--network", "none", "--restart", "no",
		"--tmpfs", "/tmp:rw,nosuid,nodev,noexec,size=33554432,mode=1777,uid=1000,gid=1000",
		"--tmpfs", "/workspace:rw,nosuid,nodev,noexec,size=33554432,mode=0777,uid=1000,gid=1000",
		"--tmpfs", "/run/paddock:rw,nosuid,nodev,noexec,size=65536,mode=0755",
		"--entrypoint", "/bin/sh", image, "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"}
}

// DockerConfig is the adapter configuration the latency figures use: the
// CLI side's limits, on runc.
func DockerConfig(image string) docker.Config {
	return docker.Config{Image: image, Runtime: docker.RuntimeRunc, MemoryMB: 256, DiskMB: 64, MaxProcesses: 128, CPUs: 1}
}

// cli runs the docker command line against the same engine.
func cli(args ...string) error {
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %v: %v: %s", args, err, out)
	}
	return nil
}

// DockerLatencies are the mean milliseconds of each side.
type DockerLatencies struct {
	CreateAdapter, CreateCLI float64 // create to the first exec's end
	ExecAdapter, ExecCLI     float64 // one exec of true
}

// DockerLatency times, runs times each and alternating, create-to-first-
// exec and an exec round trip through the adapter a and through the
// docker CLI on the same engine. Its sandboxes are named after prefix.
func DockerLatency(a *docker.Adapter, image, prefix string, runs int) (DockerLatencies, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return DockerLatencies{}, fmt.Errorf("the docker CLI is the baseline and is not installed")
	}
	ctx := context.Background()
	var createA, createC, execA, execC time.Duration
	for i := range runs {
		name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), i)
		start := time.Now()
		h, err := a.Create(ctx, name, paddock.CreateOpts{})
		if err != nil {
			return DockerLatencies{}, err
		}
		if _, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{}); err != nil {
			_ = a.Destroy(ctx, h)
			return DockerLatencies{}, err
		}
		createA += time.Since(start)
		start = time.Now()
		_, err = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
		execA += time.Since(start)
		if derr := a.Destroy(ctx, h); err == nil {
			err = derr
		}
		if err != nil {
			return DockerLatencies{}, err
		}

		start = time.Now()
		if err := cli(DockerCLIRunArgs(name+"-cli", image)...); err != nil {
			return DockerLatencies{}, err
		}
		err = cli("exec", name+"-cli", "true")
		createC += time.Since(start)
		if err == nil {
			start = time.Now()
			err = cli("exec", name+"-cli", "true")
			execC += time.Since(start)
		}
		if rerr := cli("rm", "-f", name+"-cli"); err == nil {
			err = rerr
		}
		if err != nil {
			return DockerLatencies{}, err
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(runs) / float64(time.Millisecond) }
	return DockerLatencies{CreateAdapter: ms(createA), CreateCLI: ms(createC), ExecAdapter: ms(execA), ExecCLI: ms(execC)}, nil
}

// DockerFigures measures DockerLatency as two figures, each adapter/cli
// with goal <= 1.0.
func DockerFigures(a *docker.Adapter, image string, runs int) ([]Figure, error) {
	l, err := DockerLatency(a, image, "paddock-bench", runs)
	if err != nil {
		return nil, err
	}
	details := map[string]float64{"create_adapter_ms": l.CreateAdapter, "create_cli_ms": l.CreateCLI,
		"exec_adapter_ms": l.ExecAdapter, "exec_cli_ms": l.ExecCLI}
	create := Figure{Name: "docker: create to first exec, adapter vs the docker CLI", Unit: "adapter/cli",
		Value: l.CreateAdapter / l.CreateCLI, Measured: fmt.Sprintf("%.0f vs %.0f ms", l.CreateAdapter, l.CreateCLI), Details: details}
	atMost(&create, 1.0)
	execRT := Figure{Name: "docker: exec round trip, adapter vs the docker CLI", Unit: "adapter/cli",
		Value: l.ExecAdapter / l.ExecCLI, Measured: fmt.Sprintf("%.0f vs %.0f ms", l.ExecAdapter, l.ExecCLI), Details: details}
	atMost(&execRT, 1.0)
	return []Figure{create, execRT}, nil
}
