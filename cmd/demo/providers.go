package main

import (
	"context"
	"os"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/internal/providers"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// startRuntime starts a runtime over the demo's providers; stop shuts both
// down.
func startRuntime(localRoot string, log zerolog.Logger, metrics prometheus.Registerer) (rt *actors.Runtime, reg paddock.Registry, stop func(), err error) {
	reg, closeReg, err := providers.Registry(localRoot, log, os.Getenv, metrics)
	if err != nil {
		return nil, nil, nil, err
	}
	// One identity per machine: a demo restarted after a crash adopts the
	// sandboxes the last one held instead of reaping them once their
	// leases lapse.
	host, _ := os.Hostname()
	rt, err = actors.Start(actors.Config{Adapters: reg, Logger: log, Metrics: metrics, Identity: "paddock-demo@" + host})
	if err != nil {
		closeReg()
		return nil, nil, nil, err
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
		closeReg()
	}
	return rt, reg, stop, nil
}
