package main

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/actors"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/fake"
	"github.com/rs/zerolog"
)

// registry builds the providers the demo offers: local always (the
// embedded default) and the fake. Adapters for Docker and the hosted
// providers join here as they land.
func registry(localRoot string, log zerolog.Logger) (paddock.Registry, func(), error) {
	opts := []local.Option{local.WithLogger(log)}
	if localRoot != "" {
		opts = append(opts, local.WithRoot(localRoot))
	}
	l, err := local.New(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("local provider: %w", err)
	}
	reg := paddock.Registry{
		paddock.ProviderLocal: l,
		paddock.ProviderFake:  fake.New(),
	}
	return reg, func() { _ = l.Close() }, nil
}

// startRuntime starts a runtime over the demo's providers; stop shuts both
// down.
func startRuntime(localRoot string, log zerolog.Logger) (rt *actors.Runtime, reg paddock.Registry, stop func(), err error) {
	reg, closeReg, err := registry(localRoot, log)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err = actors.Start(actors.Config{Adapters: reg, Logger: log})
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
