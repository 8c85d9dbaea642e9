package docker_test

import (
	"os/exec"
	"testing"

	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/internal/perf"
)

// BenchmarkLatency measures, in one run, create-to-first-exec and an exec
// round trip through the adapter and the same operations through the
// docker CLI, alternating (package perf, which cmd/paddock-bench also
// runs), and reports both medians and their ratios (adapter/cli).
func BenchmarkLatency(b *testing.B) {
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("the docker CLI is the baseline and is not installed")
	}
	a := newAdapter(b)
	image := dockertest.Image(b)
	l, err := perf.DockerLatency(a, image, "bench", b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(l.CreateAdapter, "create-adapter-ms")
	b.ReportMetric(l.CreateCLI, "create-cli-ms")
	b.ReportMetric(l.CreateAdapter/l.CreateCLI, "create-adapter/cli")
	b.ReportMetric(l.ExecAdapter, "exec-adapter-ms")
	b.ReportMetric(l.ExecCLI, "exec-cli-ms")
	b.ReportMetric(l.ExecAdapter/l.ExecCLI, "exec-adapter/cli")
}
