package egress

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Verdicts counts a provider's gates' decisions in reg, as
// paddock_egress_connections_total{provider, verdict} (allowed, denied):
// no name labels, so the series stay few. Every adapter that registers it
// in one registry shares the one counter.
func Verdicts(reg prometheus.Registerer, provider string) (func(allowed bool), error) {
	var counter *prometheus.CounterVec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_egress_connections_total",
		Help: "Connections out of sandboxes the egress gate decided, by verdict: allowed or denied."}, []string{"provider", "verdict"})
	if err := reg.Register(counter); err != nil {
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return nil, err
		}
		existing, ok := already.ExistingCollector.(*prometheus.CounterVec)
		if !ok {
			return nil, err
		}
		counter = existing
	}
	allowed, denied := counter.WithLabelValues(provider, "allowed"), counter.WithLabelValues(provider, "denied")
	return func(ok bool) {
		if ok {
			allowed.Inc()
		} else {
			denied.Inc()
		}
	}, nil
}
