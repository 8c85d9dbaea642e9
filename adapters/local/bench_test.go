package local_test

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
)

// BenchmarkStream streams a command's stdout through the runtime on this
// adapter (session journal, command actor, channel) and, in the same run,
// reads the same command with plain os/exec, and reports both rates and
// their ratio.
func BenchmarkStream(b *testing.B) {
	cases := map[string][]string{
		"zeros-256MiB":  {"head", "-c", "268435456", "/dev/zero"},
		"lines-~100MiB": {"seq", "1", "13000000"},
	}
	for name, argv := range cases {
		b.Run(name, func(b *testing.B) {
			for mode, opt := range map[string]local.Option{
				"unisolated": local.WithIsolation(local.IsolationNone),
				"auto":       local.WithIsolation(local.IsolationAuto),
			} {
				b.Run(mode, func(b *testing.B) { benchStream(b, argv, opt) })
			}
		})
	}
}

func benchStream(b *testing.B, argv []string, opt local.Option) {
	a, err := local.New(local.WithRoot(b.TempDir()), opt)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: a}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	h, err := rt.Create(ctx, paddock.ProviderLocal, "bench", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	var raw, through time.Duration
	var rawBytes, throughBytes int64
	for range b.N {
		start := time.Now()
		cmd := exec.Command(argv[0], argv[1:]...)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, out)
		_ = cmd.Wait()
		raw += time.Since(start)
		rawBytes += n

		start = time.Now()
		s, err := rt.Spawn(ctx, h, paddock.NewCmd(argv[0], argv[1:]...), paddock.SpawnOpts{})
		if err != nil {
			b.Fatal(err)
		}
		for f := range s.C() {
			if d, ok := f.(interface{ GetData() []byte }); ok {
				throughBytes += int64(len(d.GetData()))
			}
		}
		through += time.Since(start)
	}
	if rawBytes != throughBytes {
		b.Fatalf("byte counts differ: raw %d, through the runtime %d", rawBytes, throughBytes)
	}
	mbps := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() / (1 << 20) }
	b.SetBytes(rawBytes / int64(b.N))
	b.ReportMetric(mbps(rawBytes, raw), "os/exec-MB/s")
	b.ReportMetric(mbps(throughBytes, through), "runtime-MB/s")
	b.ReportMetric(mbps(throughBytes, through)/mbps(rawBytes, raw), "runtime/os-exec")
}
