package local_test

import (
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/egress/egresstest"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
)

// BenchmarkEgress downloads the test internet's 32 MiB blob over HTTPS with
// curl from two isolated sandboxes in the same run: one whose traffic goes
// through its egress gate under a policy that allows the name, one made
// with egress=unrestricted that connects to the server directly. It
// reports both rates and their ratio (goal: at least 0.8).
func BenchmarkEgress(b *testing.B) {
	if _, ok := localtest.Modes(b)["namespaces"]; !ok {
		b.Skip("egress is enforced in isolated sandboxes only")
	}
	in := egresstest.New(b)
	a := newLocal(b, withIsolation(local.IsolationNamespaces), func(c *local.Config) {
		c.Egress = local.EgressConfig{Resolve: in.Resolve, Dial: in.Dial}
	})
	gated, open := box(b, a, "gated"), box(b, a, "open", "egress", "unrestricted")
	if err := a.ApplyNetworkPolicy(ctx, gated, paddock.NetworkPolicy{Allow: []string{"pkg.test"}}); err != nil {
		b.Fatal(err)
	}
	for _, h := range []paddock.Handle{gated, open} {
		if err := os.WriteFile(a.HostPath(h, "/ca.pem"), in.CAPEM, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	download := func(h paddock.Handle, extra string) float64 {
		start := time.Now()
		out, code := execOut(b, a, h, "curl -sS --cacert "+a.HostPath(h, "/ca.pem")+" "+extra+" -o /dev/null https://pkg.test/blob 2>&1")
		if code != 0 {
			b.Fatalf("curl: %d: %s", code, out)
		}
		return float64(egresstest.BlobSize) / (1 << 20) / time.Since(start).Seconds()
	}
	var viaGate, direct float64
	b.ResetTimer()
	for range b.N {
		viaGate += download(gated, "")
		direct += download(open, "--connect-to pkg.test:443:"+in.HTTPSAddr())
	}
	b.ReportMetric(viaGate/float64(b.N), "gate-MB/s")
	b.ReportMetric(direct/float64(b.N), "direct-MB/s")
	b.ReportMetric(viaGate/direct, "gate/direct")
}
