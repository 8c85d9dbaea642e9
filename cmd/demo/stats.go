package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsPage serves the runtime's metrics in Prometheus' text format
// (behind the console's token, like every route).
func (c *console) metricsPage(w http.ResponseWriter, r *http.Request) {
	if c.metrics == nil {
		http.Error(w, "metrics are off", http.StatusNotFound)
		return
	}
	promhttp.HandlerFor(c.metrics, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// stats is what the console's live panel shows, summed over providers.
type stats struct {
	Sandboxes float64 `json:"sandboxes"`     // live sandboxes
	Commands  float64 `json:"commands"`      // live commands
	Bytes     float64 `json:"bytes"`         // stdout and stderr bytes streamed
	Errors    float64 `json:"errors"`        // requests and streams of this console that failed (each once, as the page saw it)
	Waiting   float64 `json:"waiting"`       // commands waiting for their owner's credit
	Journal   float64 `json:"journal_bytes"` // bytes in session journals
}

// stats answers the live panel's numbers: the runtime's metrics, and the
// console's own count of failures (a request refused before it reached
// the runtime, such as a bad sandbox name, counts too).
func (c *console) stats(w http.ResponseWriter, _ *http.Request) {
	s := stats{Errors: float64(c.failures.Load())}
	if c.metrics == nil {
		c.writeJSON(w, s, nil)
		return
	}
	families, err := c.metrics.Gather()
	if err != nil {
		c.writeJSON(w, nil, err)
		return
	}
	sums := map[string]*float64{
		"paddock_sandboxes_live": &s.Sandboxes, "paddock_commands_live": &s.Commands,
		"paddock_stream_bytes_total":          &s.Bytes,
		"paddock_commands_waiting_for_credit": &s.Waiting, "paddock_journal_bytes": &s.Journal,
	}
	for _, f := range families {
		sum, ok := sums[f.GetName()]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			*sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	c.writeJSON(w, s, nil)
}
