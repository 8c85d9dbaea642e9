package perf

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock"
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
	timed := func(samples *[]float64, f func() error) error {
		start := time.Now()
		err := f()
		*samples = append(*samples, time.Since(start).Seconds())
		return err
	}
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
		err := timed(&ck, func() error {
			var err error
			id, err = a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			return err
		})
		if err == nil {
			err = timed(&cp, cpA(filepath.Join(copies, fmt.Sprint("ck-", i))))
		}
		var fork paddock.Handle
		if err == nil {
			err = timed(&fk, func() error {
				var err error
				fork, err = a.Fork(ctx, h, id, fmt.Sprint("fork-", i), paddock.ForkOpts{})
				return err
			})
		}
		if err == nil {
			err = timed(&cpf, cpA(filepath.Join(copies, fmt.Sprint("fork-", i))))
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

// LocalCheckpointFigures measures LocalCheckpoint as two figures, each the
// adapter's time over cp -a's, goal <= CheckpointGoal.
func LocalCheckpointFigures(size int64, runs int) ([]Figure, error) {
	t, err := LocalCheckpoint(size, runs)
	if err != nil {
		return nil, err
	}
	mib := size >> 20
	ck := Figure{Name: fmt.Sprintf("local: checkpoint of %d MiB of files vs cp -a", mib), Unit: "adapter/cp",
		Measured: fmt.Sprintf("%.0f vs %.0f ms", t.Checkpoint*1000, t.CopyCheckpoint*1000), Value: t.Checkpoint / t.CopyCheckpoint,
		Details: map[string]float64{"checkpoint_s": t.Checkpoint, "cp_s": t.CopyCheckpoint}}
	atMost(&ck, CheckpointGoal)
	fk := Figure{Name: fmt.Sprintf("local: fork of a %d MiB checkpoint vs cp -a", mib), Unit: "adapter/cp",
		Measured: fmt.Sprintf("%.0f vs %.0f ms", t.Fork*1000, t.CopyFork*1000), Value: t.Fork / t.CopyFork,
		Details: map[string]float64{"fork_s": t.Fork, "cp_s": t.CopyFork}}
	atMost(&fk, CheckpointGoal)
	return []Figure{ck, fk}, nil
}
