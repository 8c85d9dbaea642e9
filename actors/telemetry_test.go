package actors_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// reapingFake is the fake keeping leases, whose facts make a sweep stop
// one sandbox and destroy two.
type reapingFake struct{ *fake.Adapter }

func (reapingFake) SandboxFacts(context.Context) ([]paddock.SandboxFacts, error) {
	old := time.Now().Add(-2 * time.Hour)
	return []paddock.SandboxFacts{
		{Name: "idle", Created: old, Idle: time.Hour, Running: true},
		{Name: "old-1", Created: old, MaxAge: time.Hour},
		{Name: "old-2", Created: old, MaxAge: time.Hour},
	}, nil
}
func (reapingFake) RenewLeases(context.Context, []string, paddock.Lease) error { return nil }
func (reapingFake) Reclaim(context.Context, paddock.SandboxFacts) error        { return nil }
func (reapingFake) StopIdle(context.Context, paddock.SandboxFacts) error       { return nil }

// scrape gathers reg into "name{label=value,...}" -> value; a histogram
// is its sample count, as name_count{...}.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[f.GetName()+key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[f.GetName()+key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[f.GetName()+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// workload is the scripted run both tests below observe: two creates, an
// exec, a spawn read to its end (two stdout frames of 3 bytes, one stderr
// frame of 3 bytes, the exit), an attach to a session that does not exist
// (not_found), a destroy, and a reaper sweep.
func workload(t *testing.T, ctx context.Context, rt *actors.Runtime) {
	t.Helper()
	box, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	other, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "other", paddock.CreateOpts{})
	require.NoError(t, err)
	res, err := rt.Adapter(box.Provider).Exec(ctx, box, paddock.NewCmd("emit", "out:hello"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, "hello", string(res.Stdout))
	s, err := spawn(rt, ctx, box, paddock.NewCmd("emit", "out:a", "out:bb", "err:ccc", "exit:0"), paddock.SpawnOpts{})
	require.NoError(t, err)
	for range s.C() {
	}
	_, err = attach(rt, ctx, box, "s-missing", paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.NoError(t, rt.Adapter(other.Provider).Destroy(ctx, other))
	_, err = rt.Reap(ctx, paddock.ReapOpts{})
	require.NoError(t, err)
}

// Every metric after the workload, exactly.
func TestMetricsOfAScriptedWorkload(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := fake.New()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: reapingFake{f}}, Metrics: reg, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	workload(t, context.Background(), rt)

	want := map[string]float64{
		"paddock_sandboxes_live{provider=fake}":                                                 1, // box; other was destroyed
		"paddock_commands_live{provider=fake}":                                                  0,
		"paddock_commands_waiting_for_credit{provider=fake}":                                    0,
		"paddock_frames_total{kind=stdout,provider=fake}":                                       2,
		"paddock_frames_total{kind=stderr,provider=fake}":                                       1,
		"paddock_frames_total{kind=exit,provider=fake}":                                         1,
		"paddock_frames_total{kind=error,provider=fake}":                                        0,
		"paddock_frames_total{kind=file_change,provider=fake}":                                  0,
		"paddock_stream_bytes_total{provider=fake,stream=stdout}":                               3,
		"paddock_stream_bytes_total{provider=fake,stream=stderr}":                               3,
		"paddock_operation_duration_seconds_count{operation=create,provider=fake}":              2,
		"paddock_operation_duration_seconds_count{operation=exec,provider=fake}":                1,
		"paddock_operation_duration_seconds_count{operation=spawn,provider=fake}":               1,
		"paddock_operation_duration_seconds_count{operation=attach,provider=fake}":              1,
		"paddock_operation_duration_seconds_count{operation=destroy,provider=fake}":             1,
		"paddock_operation_errors_total{detail=,kind=not_found,operation=attach,provider=fake}": 1,
		"paddock_reaper_actions_total{action=stopped,provider=fake}":                            1,
		"paddock_reaper_actions_total{action=destroyed,provider=fake}":                          2,
	}
	// Actors stop and goroutines record their operation a moment after
	// the replies the workload waited for: poll until it settles.
	var got map[string]float64
	require.Eventually(t, func() bool {
		got = scrape(t, reg)
		return assert.ObjectsAreEqual(want, got)
	}, time.Minute, 5*time.Millisecond, "the metrics never matched")
	assert.Equal(t, want, got)
}

// A span per operation, named for it, with the provider, the operation and
// the error kind, each a child of the caller's span.
func TestSpansOfAScriptedWorkload(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: reapingFake{fake.New()}}, Tracer: tp, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	ctx, turn := tp.Tracer("agent").Start(context.Background(), "agent turn")
	workload(t, ctx, rt)
	turn.End()

	var spans []sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		spans = rec.Ended()
		return len(spans) == 7 // six operations and the turn
	}, time.Minute, 5*time.Millisecond)
	var names []string
	for _, s := range spans {
		if s.Name() == "agent turn" {
			continue
		}
		names = append(names, s.Name())
		attrs := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value.AsString()
		}
		op := strings.TrimPrefix(s.Name(), "paddock.")
		assert.Equal(t, "fake", attrs["paddock.provider"], s.Name())
		assert.Equal(t, op, attrs["paddock.operation"], s.Name())
		assert.Equal(t, trace.SpanKindClient, s.SpanKind(), s.Name())
		assert.Equal(t, turn.SpanContext().SpanID(), s.Parent().SpanID(), "%s is a child of the caller's span", s.Name())
		assert.Equal(t, turn.SpanContext().TraceID(), s.SpanContext().TraceID(), s.Name())
		if op == "attach" {
			assert.Equal(t, "not_found", attrs["paddock.error_kind"])
			assert.Equal(t, codes.Error, s.Status().Code)
			continue
		}
		_, hasKind := attrs["paddock.error_kind"]
		assert.False(t, hasKind, s.Name())
		assert.Equal(t, codes.Unset, s.Status().Code, s.Name())
	}
	sort.Strings(names)
	assert.Equal(t, []string{"paddock.attach", "paddock.create", "paddock.create", "paddock.destroy", "paddock.exec", "paddock.spawn"}, names)
}

// journalingFake is the fake with journals the runtime can count.
type journalingFake struct{ *fake.Adapter }

func (journalingFake) JournalBytes() int64 { return 1234 }

// An adapter that keeps journals has its bytes reported per provider, read
// at each scrape; the others have no such series.
func TestJournalBytesMetric(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"journaled": journalingFake{fake.New()}, paddock.ProviderFake: fake.New()},
		Metrics: reg, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	got := scrape(t, reg)
	assert.Equal(t, 1234.0, got["paddock_journal_bytes{provider=journaled}"])
	_, has := got["paddock_journal_bytes{provider=fake}"]
	assert.False(t, has)
}

// Both off (the default): nothing is registered, no span is made.
func TestTelemetryIsOffByDefault(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: reapingFake{fake.New()}}, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	ctx, turn := tp.Tracer("agent").Start(context.Background(), "agent turn")
	workload(t, ctx, rt)
	turn.End()
	require.Len(t, rec.Ended(), 1, "only the caller's own span")
}

// Two runtimes cannot register the same metrics in one registry: the
// second is refused, as invalid, and does not start.
func TestMetricsRegisteredTwiceAreRefused(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}, Metrics: reg, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	_, err = actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}, Metrics: reg, Name: "second", ReapInterval: -1})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}
