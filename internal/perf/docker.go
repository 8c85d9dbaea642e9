package perf

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
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

// DockerLatencies are the median milliseconds of each side.
type DockerLatencies struct {
	CreateAdapter, CreateCLI float64 // create to the first exec's end
	ExecAdapter, ExecCLI     float64 // one exec of true
}

// execsPerRun is how many exec round trips each side makes per sandbox,
// alternating: the two sides cost nearly the same, so a figure of one
// sample each would be decided by the machine's noise.
const execsPerRun = 5

// DockerLatency times create-to-first-exec (runs times) and an exec round
// trip (execsPerRun times per create) through the adapter a and through
// the docker CLI on the same engine, the two sides alternating sample by
// sample, and answers each side's median. Its sandboxes are named after
// prefix.
func DockerLatency(a *docker.Adapter, image, prefix string, runs int) (DockerLatencies, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return DockerLatencies{}, fmt.Errorf("the docker CLI is the baseline and is not installed")
	}
	ctx := context.Background()
	var createA, createC, execA, execC []time.Duration
	timed := func(samples *[]time.Duration, f func() error) error {
		start := time.Now()
		err := f()
		*samples = append(*samples, time.Since(start))
		return err
	}
	for i := range runs {
		name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), i)
		var h paddock.Handle
		err := timed(&createA, func() error {
			var err error
			if h, err = a.Create(ctx, name, paddock.CreateOpts{}); err != nil {
				return err
			}
			_, err = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
			return err
		})
		if err == nil {
			err = timed(&createC, func() error {
				if err := cli(DockerCLIRunArgs(name+"-cli", image)...); err != nil {
					return err
				}
				return cli("exec", name+"-cli", "true")
			})
		}
		for range execsPerRun {
			if err != nil {
				break
			}
			if err = timed(&execA, func() error {
				_, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
				return err
			}); err == nil {
				err = timed(&execC, func() error { return cli("exec", name+"-cli", "true") })
			}
		}
		if h.Name != "" {
			err = errors.Join(err, a.Destroy(ctx, h))
		}
		err = errors.Join(err, cli("rm", "-f", name+"-cli"))
		if err != nil {
			return DockerLatencies{}, err
		}
	}
	ms := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
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
