package perf

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
)

// checkpointFileSize is the size of each file the checkpoint figures'
// sandbox holds: size bytes in files of 1 MiB.
const checkpointFileSize = 1 << 20

// CheckpointGoal is how much slower than copying the same files a
// checkpoint or a fork may be.
const CheckpointGoal = 1.2

// LocalCheckpointTimes are the median seconds of each side.
type LocalCheckpointTimes struct {
	Checkpoint, Fork, CopyCheckpoint, CopyFork float64
}

// LocalCheckpoint times, runs times each, a checkpoint of an unisolated
// local sandbox holding size bytes of files (1 MiB each) and a fork from
// it, each against `cp -a` of the same files on the same filesystem, the
// sides alternating.
func LocalCheckpoint(size int64, runs int) (LocalCheckpointTimes, error) {
	if _, err := exec.LookPath("cp"); err != nil {
		return LocalCheckpointTimes{}, errors.New("cp -a is the baseline and is not installed")
	}
	a, done, err := newLocal(Unisolated)
	if err != nil {
		return LocalCheckpointTimes{}, err
	}
	defer done()
	ctx := context.Background()
	h, err := a.Create(ctx, "checkpointed", paddock.CreateOpts{})
	if err != nil {
		return LocalCheckpointTimes{}, err
	}
	files := a.HostPath(h, "/data")
	if err := fill(files, size); err != nil {
		return LocalCheckpointTimes{}, err
	}
	copies := filepath.Join(a.Root(), ".perf-copies")
	var cp, ck, fk, cpf []float64
	cpA := func(dst string) func() error {
		return func() error {
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if out, err := exec.Command("cp", "-a", a.HostPath(h, "/"), dst).CombinedOutput(); err != nil {
				return fmt.Errorf("cp -a: %v: %s", err, out)
			}
			return nil
		}
	}
	for i := range runs {
		var id string
		err := timeInto(&ck, func() error {
			var err error
			id, err = a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			return err
		})
		if err == nil {
			err = timeInto(&cp, cpA(filepath.Join(copies, fmt.Sprint("ck-", i))))
		}
		var fork paddock.Handle
		if err == nil {
			err = timeInto(&fk, func() error {
				var err error
				fork, err = a.Fork(ctx, h, id, fmt.Sprint("fork-", i), paddock.ForkOpts{})
				return err
			})
		}
		if err == nil {
			err = timeInto(&cpf, cpA(filepath.Join(copies, fmt.Sprint("fork-", i))))
		}
		if fork.Name != "" {
			err = errors.Join(err, a.Destroy(ctx, fork))
		}
		if id != "" {
			err = errors.Join(err, a.DeleteCheckpoint(ctx, h, id))
		}
		err = errors.Join(err, os.RemoveAll(copies))
		if err != nil {
			return LocalCheckpointTimes{}, err
		}
	}
	return LocalCheckpointTimes{Checkpoint: median(ck), Fork: median(fk), CopyCheckpoint: median(cp), CopyFork: median(cpf)}, nil
}

// timeInto runs f and appends the seconds it took to samples.
func timeInto(samples *[]float64, f func() error) error {
	start := time.Now()
	err := f()
	*samples = append(*samples, time.Since(start).Seconds())
	return err
}

// fill writes size bytes of random files of checkpointFileSize into dir.
func fill(dir string, size int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf := make([]byte, checkpointFileSize)
	for i := int64(0); i*checkpointFileSize < size; i++ {
		_, _ = rand.Read(buf) // crypto/rand.Read never fails
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), buf, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// versus is the figure of seconds against a baseline's seconds, each
// kept in Details under its key.
func versus(name, unit, key, baselineKey string, seconds, baseline float64) Figure {
	return Figure{Name: name, Unit: unit, Measured: fmt.Sprintf("%.0f vs %.0f ms", seconds*1000, baseline*1000),
		Value: seconds / baseline, Details: map[string]float64{key: seconds, baselineKey: baseline}}
}

// LocalCheckpointFigures measures LocalCheckpoint as two figures, each the
// adapter's time over cp -a's, goal <= CheckpointGoal.
func LocalCheckpointFigures(size int64, runs int) ([]Figure, error) {
	t, err := LocalCheckpoint(size, runs)
	if err != nil {
		return nil, err
	}
	mib := size >> 20
	ck := versus(fmt.Sprintf("local: checkpoint of %d MiB of files vs cp -a", mib), "adapter/cp", "checkpoint_s", "cp_s", t.Checkpoint, t.CopyCheckpoint)
	atMost(&ck, CheckpointGoal)
	fk := versus(fmt.Sprintf("local: fork of a %d MiB checkpoint vs cp -a", mib), "adapter/cp", "fork_s", "cp_s", t.Fork, t.CopyFork)
	atMost(&fk, CheckpointGoal)
	return []Figure{ck, fk}, nil
}

// fillScript writes size bytes of random files of checkpointFileSize into
// dir, inside a sandbox or container.
func fillScript(dir string, size int64) string {
	return fmt.Sprintf(`mkdir -p %[1]s && i=0 && while [ $i -lt %[2]d ]; do head -c %[3]d /dev/urandom > %[1]s/f$i || exit 1; i=$((i+1)); done`,
		dir, (size+checkpointFileSize-1)/checkpointFileSize, checkpointFileSize)
}

// DockerCheckpointConfig is the adapter configuration of the docker
// checkpoint figures: DockerConfig with room for size bytes of files in
// the sandbox's scratch.
func DockerCheckpointConfig(image string, size int64) docker.Config {
	cfg := DockerConfig(image)
	cfg.DiskMB = 2*(size>>20) + 64    // half is /workspace
	cfg.MemoryMB = 3*(size>>20) + 256 // the scratch is memory (tmpfs)
	return cfg
}

// DockerCheckpoint times, runs times each, a checkpoint of a docker
// sandbox holding size bytes of files (1 MiB each) in its scratch and a
// fork from it, against `docker commit` of a container holding the same
// bytes in its writable layer and `docker run` of the image that made,
// the sides alternating. a must be configured by DockerCheckpointConfig.
func DockerCheckpoint(a *docker.Adapter, image, prefix string, size int64, runs int) (LocalCheckpointTimes, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return LocalCheckpointTimes{}, errors.New("the docker CLI is the baseline and is not installed")
	}
	ctx := context.Background()
	stamp := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	h, err := a.Create(ctx, stamp+"-src", paddock.CreateOpts{})
	if err != nil {
		return LocalCheckpointTimes{}, err
	}
	defer func() { _ = a.Destroy(context.Background(), h) }()
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", fillScript("/workspace/data", size)), paddock.ExecOpts{})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("filling the sandbox: exit %d: %s", res.ExitCode, res.Stderr)
	}
	if err != nil {
		return LocalCheckpointTimes{}, err
	}
	// The CLI's source keeps the files in its writable layer, which is
	// what docker commit takes: not read-only, and its user the image's
	// (root), which owns the directories there.
	src := stamp + "-cli-src"
	args := DockerCLIRunArgs(src, image)
	if i := slices.Index(args, "--user"); i >= 0 {
		args = slices.Delete(args, i, i+2)
	}
	args = slices.DeleteFunc(args, func(s string) bool { return s == "--read-only" })
	if err := cli(args...); err != nil {
		return LocalCheckpointTimes{}, err
	}
	defer func() { _ = cli("rm", "-f", src) }()
	if err := cli("exec", src, "sh", "-c", fillScript("/data", size)); err != nil {
		return LocalCheckpointTimes{}, err
	}
	var ck, cc, fk, cf []float64
	for i := range runs {
		var id string
		err := timeInto(&ck, func() error {
			var err error
			id, err = a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			return err
		})
		committed := fmt.Sprintf("%s-img-%d", stamp, i)
		if err == nil {
			err = timeInto(&cc, func() error { return cli("commit", src, committed) })
		}
		var fork paddock.Handle
		if err == nil {
			err = timeInto(&fk, func() error {
				var err error
				fork, err = a.Fork(ctx, h, id, fmt.Sprintf("%s-fork-%d", stamp, i), paddock.ForkOpts{})
				return err
			})
		}
		run := fmt.Sprintf("%s-run-%d", stamp, i)
		if err == nil {
			err = timeInto(&cf, func() error { return cli(DockerCLIRunArgs(run, committed)...) })
		}
		err = errors.Join(err, cli("rm", "-f", run))
		if fork.Name != "" {
			err = errors.Join(err, a.Destroy(ctx, fork))
		}
		if id != "" {
			err = errors.Join(err, a.DeleteCheckpoint(ctx, h, id))
		}
		err = errors.Join(err, cli("rmi", "-f", committed))
		if err != nil {
			return LocalCheckpointTimes{}, err
		}
	}
	return LocalCheckpointTimes{Checkpoint: median(ck), Fork: median(fk), CopyCheckpoint: median(cc), CopyFork: median(cf)}, nil
}

// DockerCheckpointFigures measures DockerCheckpoint as three figures: the
// checkpoint over docker commit's time, the checkpoint and a fork from it
// over docker commit and docker run of the committed image, each goal <=
// CheckpointGoal; and the fork alone over docker run's, with no goal:
// docker run of a committed image copies nothing (its files stay in the
// image's layers), while a fork fills the new sandbox's scratch, which is
// memory, with every byte.
func DockerCheckpointFigures(a *docker.Adapter, image string, size int64, runs int) ([]Figure, error) {
	t, err := DockerCheckpoint(a, image, "paddock-bench-checkpoint", size, runs)
	if err != nil {
		return nil, err
	}
	mib := size >> 20
	ck := versus(fmt.Sprintf("docker: checkpoint of %d MiB of files vs docker commit", mib), "adapter/cli", "checkpoint_s", "commit_s", t.Checkpoint, t.CopyCheckpoint)
	atMost(&ck, CheckpointGoal)
	both := versus(fmt.Sprintf("docker: checkpoint and fork of %d MiB of files vs docker commit and docker run", mib), "adapter/cli",
		"checkpoint_fork_s", "commit_run_s", t.Checkpoint+t.Fork, t.CopyCheckpoint+t.CopyFork)
	atMost(&both, CheckpointGoal)
	fk := versus(fmt.Sprintf("docker: fork of a %d MiB checkpoint vs docker run of the committed image", mib), "adapter/cli", "fork_s", "run_s", t.Fork, t.CopyFork)
	fk.NoGoal = "docker run copies nothing (the files stay in the image's layers); a fork writes every byte into the sandbox's memory-backed scratch"
	return []Figure{ck, both, fk}, nil
}
