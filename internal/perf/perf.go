// Package perf measures Paddock's performance figures, each next to its
// baseline in the same run: the package benchmarks and cmd/paddock-bench
// both call it, so a figure is measured one way wherever it is printed.
package perf

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
)

// Figure is one measured row: what was measured, its value and its
// baseline's, the ratio its goal is about, the goal, and whether it holds.
// A goal is a floor the machine holds from run to run, which a regression
// breaks; a figure may also name an aim above it, a target not yet held
// from run to run, printed with whether this run met it.
type Figure struct {
	Name     string  `json:"name"`
	Measured string  `json:"measured"` // the two sides, for people
	Value    float64 `json:"value"`    // what the goal is about
	Unit     string  `json:"unit"`     // of Value
	Goal     string  `json:"goal"`     // e.g. ">= 0.2"
	Holds    bool    `json:"holds"`
	Aim      string  `json:"aim,omitempty"`     // e.g. ">= 0.8"
	AimMet   *bool   `json:"aim_met,omitempty"` // set with Aim
	Skipped  string  `json:"skipped,omitempty"` // why it was not measured
	// NoGoal says why a figure measured beside its baseline has no goal:
	// it is printed, and never fails a run.
	NoGoal  string             `json:"no_goal,omitempty"`
	Details map[string]float64 `json:"details,omitempty"` // every number behind it
}

// atLeast and atMost build the goal of a figure.
func atLeast(f *Figure, min float64) {
	f.Goal, f.Holds = fmt.Sprintf(">= %g", min), f.Value >= min
}

func atMost(f *Figure, max float64) {
	f.Goal, f.Holds = fmt.Sprintf("<= %g", max), f.Value <= max
}

// aimAtLeast names a figure's aim: at least aim.
func aimAtLeast(f *Figure, aim float64) {
	met := f.Value >= aim
	f.Aim, f.AimMet = fmt.Sprintf(">= %g", aim), &met
}

// startRuntime starts a runtime over a, with its one sandbox.
func startRuntime(p paddock.Provider, a paddock.Adapter, edit ...func(*actors.Config)) (*actors.Runtime, paddock.Handle, func(), error) {
	cfg := actors.Config{Adapters: paddock.Registry{p: a}, ReapInterval: -1}
	for _, e := range edit {
		e(&cfg)
	}
	rt, err := actors.Start(cfg)
	if err != nil {
		return nil, paddock.Handle{}, nil, err
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	}
	h, err := rt.Adapter(p).Create(context.Background(), "bench", paddock.CreateOpts{})
	if err != nil {
		stop()
		return nil, paddock.Handle{}, nil, err
	}
	return rt, h, stop, nil
}

// spawnAndCount spawns cmd in h through rt and reads its FrameStream to
// the end, answering the bytes of output it carried.
func spawnAndCount(rt *actors.Runtime, h paddock.Handle, cmd paddock.Cmd) (int64, error) {
	s, err := rt.Adapter(h.Provider).Spawn(context.Background(), h, cmd, paddock.SpawnOpts{})
	if err != nil {
		return 0, err
	}
	var n int64
	for f := range s.(*actors.FrameStream).C() {
		if d, ok := f.(interface{ GetData() []byte }); ok {
			n += int64(len(d.GetData()))
		}
	}
	return n, nil
}

// memNow returns the memory statistics and goroutine count after a GC.
func memNow() (runtime.MemStats, int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m, runtime.NumGoroutine()
}
