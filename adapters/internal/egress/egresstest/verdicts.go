package egresstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Verdicts sums the gates' decisions counted in reg by verdict (allowed,
// denied), checking that every series is provider's and labelled by
// provider and verdict alone (no names: the series stay few).
func Verdicts(t testing.TB, reg prometheus.Gatherer, provider string) map[string]float64 {
	t.Helper()
	verdicts := map[string]float64{}
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			assert.Equal(t, provider, labels["provider"], "no other label but the verdict")
			assert.Len(t, labels, 2)
			verdicts[labels["verdict"]] += m.GetCounter().GetValue()
		}
	}
	return verdicts
}
