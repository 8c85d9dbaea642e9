// Package telemetry is the runtime's metrics (Prometheus, in a registry
// the embedder passes) and traces (OpenTelemetry, from a tracer provider
// the embedder passes). Both are off by default: a nil *Telemetry and the
// values it hands out do nothing, at the cost of a nil check.
//
// Label sets are bounded: providers are the runtime's registry, operations
// the protocol's, kinds the taxonomy's, details the contract's tokens (any
// other text is "other"); never a sandbox name or a command line.
package telemetry

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Config is what the embedder passes; nil fields are off.
type Config struct {
	Registerer prometheus.Registerer
	Tracer     trace.TracerProvider
	// Journals report the bytes each provider keeps in session journals
	// (adapters that keep journals where the runtime can count them).
	Journals map[paddock.Provider]func() int64
}

// Telemetry holds the runtime's instruments.
type Telemetry struct {
	tracer    trace.Tracer // nil: no spans
	metrics   bool
	sandboxes *prometheus.GaugeVec
	commands  *prometheus.GaugeVec
	frames    *prometheus.CounterVec
	bytes     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	errors    *prometheus.CounterVec
	waiting   *prometheus.GaugeVec
	reaped    *prometheus.CounterVec
}

// New makes the instruments cfg asks for and registers the metrics; nil
// when cfg asks for none.
func New(cfg Config) (*Telemetry, error) {
	if cfg.Registerer == nil && cfg.Tracer == nil {
		return nil, nil
	}
	t := &Telemetry{}
	if cfg.Tracer != nil {
		t.tracer = cfg.Tracer.Tracer("github.com/paddockhq/paddock/actors")
	}
	if cfg.Registerer == nil {
		return t, nil
	}
	t.metrics = true
	t.sandboxes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "paddock_sandboxes_live",
		Help: "Sandboxes the runtime holds an actor for (created, adopted or used, not yet destroyed)."}, []string{"provider"})
	t.commands = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "paddock_commands_live",
		Help: "Command subscriptions (spawns, attaches, watches) the runtime streams."}, []string{"provider"})
	t.frames = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_frames_total",
		Help: "Frames sent to owners, by kind: stdout, stderr, file_change, exit, error."}, []string{"provider", "kind"})
	t.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_stream_bytes_total",
		Help: "Output bytes sent to owners, by stream: stdout, stderr."}, []string{"provider", "stream"})
	t.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "paddock_operation_duration_seconds",
		Help:    "How long operations take in the adapter, failures included.",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}}, []string{"provider", "operation"})
	t.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_operation_errors_total",
		Help: "Operations that failed, by the taxonomy's kind and the contract's detail token (other: any other text)."},
		[]string{"provider", "operation", "kind", "detail"})
	t.waiting = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "paddock_commands_waiting_for_credit",
		Help: "Commands whose owner has not granted credit for more output."}, []string{"provider"})
	t.reaped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_reaper_actions_total",
		Help: "Sandboxes the reapers acted on, by action: stopped, destroyed, orphaned."}, []string{"provider", "action"})
	collectors := []prometheus.Collector{t.sandboxes, t.commands, t.frames, t.bytes, t.duration, t.errors, t.waiting, t.reaped}
	for p, bytes := range cfg.Journals {
		collectors = append(collectors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "paddock_journal_bytes",
			Help: "Bytes the provider's session journals hold on disk.", ConstLabels: prometheus.Labels{"provider": string(p)}},
			func() float64 { return float64(bytes()) }))
	}
	for _, c := range collectors {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, &paddock.InvalidError{Detail: "metrics: " + err.Error()}
		}
	}
	return t, nil
}

// Tracing reports whether spans are made.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// SandboxLive counts a sandbox actor starting (+1) or stopping (-1).
func (t *Telemetry) SandboxLive(p paddock.Provider, delta float64) {
	if t != nil && t.metrics {
		t.sandboxes.WithLabelValues(string(p)).Add(delta)
	}
}

// Reaped counts a reaper's report.
func (t *Telemetry) Reaped(p paddock.Provider, r paddock.ReapReport) {
	if t == nil || !t.metrics {
		return
	}
	for action, names := range map[string][]string{"stopped": r.Stopped, "destroyed": r.Destroyed, "orphaned": r.Orphaned} {
		if len(names) > 0 {
			t.reaped.WithLabelValues(string(p), action).Add(float64(len(names)))
		}
	}
}

// Operation is one operation being measured; End ends it.
type Operation struct {
	t        *Telemetry
	provider string
	name     string
	start    time.Time
	span     trace.Span
}

// Start begins measuring operation op on provider p; parent is the
// caller's context when the runtime has one (nil otherwise).
func (t *Telemetry) Start(parent context.Context, p paddock.Provider, op string) *Operation {
	if t == nil {
		return nil
	}
	o := &Operation{t: t, provider: string(p), name: op, start: time.Now()}
	if t.tracer != nil {
		if parent == nil {
			parent = context.Background()
		}
		_, o.span = t.tracer.Start(parent, "paddock."+op, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("paddock.provider", o.provider), attribute.String("paddock.operation", op)))
	}
	return o
}

// End records the operation's outcome: kind and detail are the failure's
// ("" when it succeeded).
func (o *Operation) End(kind paddock.Kind, detail string) {
	if o == nil {
		return
	}
	if o.t.metrics {
		o.t.duration.WithLabelValues(o.provider, o.name).Observe(time.Since(o.start).Seconds())
		if kind != "" {
			o.t.errors.WithLabelValues(o.provider, o.name, string(kind), DetailToken(detail)).Inc()
		}
	}
	if o.span != nil {
		if kind != "" {
			o.span.SetAttributes(attribute.String("paddock.error_kind", string(kind)))
			o.span.SetStatus(codes.Error, string(kind))
		}
		o.span.End()
	}
}

// Stream is one command's instruments, resolved once per command. Its
// output counts are kept locally by the one goroutine that reads the
// command and added to the counters every flushEvery frames, at the
// terminal frame and at Flush: a frame costs no atomic operation.
type Stream struct {
	t                           *Telemetry
	provider                    string
	stdoutFrames, stderrFrames  prometheus.Counter
	stdoutBytes, stderrBytes    prometheus.Counter
	changeFrames, exit, failure prometheus.Counter
	waiting                     prometheus.Gauge

	pending pendingCounts // the reader's counts not yet added
}

// pendingCounts are a Stream's counts not yet added to its counters.
type pendingCounts struct {
	frames                   int
	stdout, stderr, changes  int
	stdoutBytes, stderrBytes int
}

// flushEvery is how many output frames a Stream counts before it adds
// them to the counters.
const flushEvery = 32

// Stream returns the instruments of a command on provider p and counts it
// live until Done.
func (t *Telemetry) Stream(p paddock.Provider) *Stream {
	if t == nil || !t.metrics {
		return nil
	}
	l := string(p)
	t.commands.WithLabelValues(l).Inc()
	return &Stream{t: t, provider: l,
		stdoutFrames: t.frames.WithLabelValues(l, "stdout"), stderrFrames: t.frames.WithLabelValues(l, "stderr"),
		changeFrames: t.frames.WithLabelValues(l, "file_change"), exit: t.frames.WithLabelValues(l, "exit"),
		failure:     t.frames.WithLabelValues(l, "error"),
		stdoutBytes: t.bytes.WithLabelValues(l, "stdout"), stderrBytes: t.bytes.WithLabelValues(l, "stderr"),
		waiting: t.waiting.WithLabelValues(l)}
}

// Event counts one frame sent for ev; only the command's reader calls it.
func (s *Stream) Event(ev paddock.Event) {
	if s == nil {
		return
	}
	p := &s.pending
	switch ev.Kind {
	case paddock.EventStdout:
		p.stdout++
		p.stdoutBytes += len(ev.Data)
	case paddock.EventStderr:
		p.stderr++
		p.stderrBytes += len(ev.Data)
	case paddock.EventFile:
		p.changes++
	case paddock.EventExit:
		s.exit.Inc()
		s.Flush()
		return
	case paddock.EventError:
		s.failure.Inc()
		s.Flush()
		return
	}
	if p.frames++; p.frames >= flushEvery {
		s.Flush()
	}
}

// Flush adds the reader's pending counts to the counters; the reader
// calls it when it ends.
func (s *Stream) Flush() {
	if s == nil {
		return
	}
	p := &s.pending
	for _, c := range []struct {
		n  int
		to prometheus.Counter
	}{{p.stdout, s.stdoutFrames}, {p.stderr, s.stderrFrames}, {p.changes, s.changeFrames},
		{p.stdoutBytes, s.stdoutBytes}, {p.stderrBytes, s.stderrBytes}} {
		if c.n > 0 {
			c.to.Add(float64(c.n))
		}
	}
	s.pending = pendingCounts{}
}

// Failed counts a terminal error frame the runtime itself decided.
func (s *Stream) Failed() {
	if s != nil {
		s.failure.Inc()
	}
}

// Waiting marks the command as waiting for credit (true) or not.
func (s *Stream) Waiting(on bool) {
	if s == nil {
		return
	}
	if on {
		s.waiting.Inc()
		return
	}
	s.waiting.Dec()
}

// Done counts the command as no longer live.
func (s *Stream) Done() {
	if s != nil {
		s.t.commands.WithLabelValues(s.provider).Dec()
	}
}

// DetailToken is detail's label value: its leading contract token (the
// text before ": "), "" for none, "other" for anything else.
func DetailToken(detail string) string {
	if detail == "" {
		return ""
	}
	token, _, _ := strings.Cut(detail, ":")
	if slices.Contains(paddock.DetailTokens(), token) {
		return token
	}
	return "other"
}
