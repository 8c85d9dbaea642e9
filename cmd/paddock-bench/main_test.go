package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/perf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The table says of each figure what was measured, its value, its goal
// and whether it holds, and its aim and whether it was met where it has
// one; a skipped row says why. (.ci/run runs the whole command with
// -quick.)
func TestTable(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	yes, no := true, false
	table(&out, []perf.Figure{
		{Name: "frames", Measured: "2.6M vs 10M frames/s", Value: 0.2578, Unit: "runtime/raw-send", Goal: ">= 0.2", Holds: true},
		{Name: "stream", Measured: "900 vs 1200 MB/s", Value: 0.75, Unit: "runtime/direct", Goal: ">= 0.8"},
		{Name: "docker", Skipped: "no engine answers"},
		{Name: "fork", Measured: "294 vs 167 ms", Value: 1.76, Unit: "adapter/cli", NoGoal: "the baseline copies nothing"},
		{Name: "lines", Measured: "600 vs 700 MB/s", Value: 0.857, Unit: "runtime/os-exec", Goal: ">= 0.75", Holds: true, Aim: ">= 0.9", AimMet: &no},
		{Name: "bulk", Measured: "2000 vs 2200 MB/s", Value: 0.909, Unit: "runtime/os-exec", Goal: ">= 0.45", Holds: true, Aim: ">= 0.8", AimMet: &yes},
	})
	assert.Equal(t, `figure  measured              value                   goal     holds    aim
frames  2.6M vs 10M frames/s  0.258 runtime/raw-send  >= 0.2   yes
stream  900 vs 1200 MB/s      0.75 runtime/direct     >= 0.8   NO
docker  no engine answers                                      skipped
fork    294 vs 167 ms         1.76 adapter/cli        none     -
lines   600 vs 700 MB/s       0.857 runtime/os-exec   >= 0.75  yes      >= 0.9 not met
bulk    2000 vs 2200 MB/s     0.909 runtime/os-exec   >= 0.45  yes      >= 0.8 met
`, out.String())
}

// A figure that misses its goal, or one that could not be measured,
// fails the run (exit 1) unless exploring; a skipped one, or one with no
// goal, does not.
func TestVerdict(t *testing.T) {
	t.Parallel()
	holds := perf.Figure{Name: "frames", Holds: true}
	misses := perf.Figure{Name: "stream", Holds: false}
	skipped := perf.Figure{Name: "docker", Skipped: "no engine answers"}
	noGoal := perf.Figure{Name: "fork", NoGoal: "the baseline copies nothing"}
	cases := []struct {
		name    string
		figures []perf.Figure
		failed  []string
		explore bool
		code    int
		says    string
	}{
		{"all hold", []perf.Figure{holds, skipped}, nil, false, 0, "every figure holds its goal (1 measured)"},
		{"one has no goal", []perf.Figure{holds, noGoal}, nil, false, 0, "every figure holds its goal (2 measured)"},
		{"missed beside one with no goal", []perf.Figure{noGoal, misses}, nil, false, 1, "misses its goal: stream"},
		{"one misses", []perf.Figure{holds, misses}, nil, false, 1, "misses its goal: stream"},
		{"one could not be measured", []perf.Figure{holds}, []string{"local stdout"}, false, 1, "could not be measured: local stdout"},
		{"exploring", []perf.Figure{holds, misses}, []string{"local stdout"}, true, 0, "misses its goal: stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			assert.Equal(t, c.code, verdict(&out, c.figures, c.failed, c.explore))
			assert.Contains(t, out.String(), c.says)
		})
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "-quick")
	assert.Contains(t, errOut.String(), "-json")
	assert.Contains(t, errOut.String(), "-explore")
	assert.Equal(t, 2, run([]string{"-bogus"}, &out, &errOut))
}

func TestTrim(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{0.25781: "0.258", 12.34: "12.3", 1234567: "1234567", 968.2: "968"} {
		assert.Equal(t, want, trim(v))
	}
}

// The processors' times read from /proc/stat add up, and a second of a
// machine this test keeps busy reads busy. Not parallel: it measures the
// whole machine.
func TestBusyOver(t *testing.T) {
	if _, _, ok := cpuTimes(); !ok {
		t.Skip("no /proc/stat here")
	}
	idle, total, ok := cpuTimes()
	require.True(t, ok)
	assert.Less(t, idle, total)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // one processor kept busy
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	busy, ok := busyOver(time.Second)
	close(stop)
	<-done
	require.True(t, ok)
	// /proc/stat may count more processors than this process may use.
	stat, err := os.ReadFile("/proc/stat")
	require.NoError(t, err)
	cpus := strings.Count(string(stat), "\ncpu")
	require.Positive(t, cpus)
	assert.Greater(t, busy, 0.3/float64(cpus), "a spinning goroutine shows")
	assert.LessOrEqual(t, busy, 1.0)
}
