package main

import (
	"bytes"
	"testing"

	"github.com/paddockhq/paddock/internal/perf"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The table says of each figure what was measured, its value, its goal
// and whether it holds; a skipped row says why. (.ci/run runs the whole
// command with -quick.)
func TestTable(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	table(&out, []perf.Figure{
		{Name: "frames", Measured: "2.6M vs 10M frames/s", Value: 0.2578, Unit: "runtime/raw-send", Goal: ">= 0.2", Holds: true},
		{Name: "stream", Measured: "900 vs 1200 MB/s", Value: 0.75, Unit: "runtime/direct", Goal: ">= 0.8"},
		{Name: "docker", Skipped: "no engine answers"},
	})
	assert.Equal(t, `figure  measured              value                   goal    holds
frames  2.6M vs 10M frames/s  0.258 runtime/raw-send  >= 0.2  yes
stream  900 vs 1200 MB/s      0.75 runtime/direct     >= 0.8  NO
docker  no engine answers                                     skipped
`, out.String())
}

func TestFlags(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "-quick")
	assert.Contains(t, errOut.String(), "-json")
	assert.Equal(t, 2, run([]string{"-bogus"}, &out, &errOut))
}

func TestTrim(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{0.25781: "0.258", 12.34: "12.3", 1234567: "1234567", 968.2: "968"} {
		assert.Equal(t, want, trim(v))
	}
}
