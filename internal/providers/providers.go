// Package providers builds the adapters a host of Paddock offers from its
// environment: the embedded local provider and the fake always, docker
// when an engine answers, each hosted provider whose credentials are set.
// The demo and paddockd read the same environment through it.
package providers

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/fake"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Registry builds the providers a host of Paddock offers (the demo, paddockd): local always (the
// embedded default), the fake, docker when an engine answers (DOCKER_HOST,
// else the default socket; image PADDOCK_DOCKER_IMAGE), and each hosted
// provider whose credentials getenv finds (Sprites: SPRITES_TOKEN, with
// SPRITES_BASE_URL and SPRITES_CHECKPOINTS=1 optional; E2B: E2B_API_KEY,
// with E2B_BASE_URL, E2B_TEMPLATE and E2B_USER optional; Daytona:
// DAYTONA_API_KEY, with DAYTONA_API_URL and DAYTONA_SNAPSHOT optional).
func Registry(localRoot string, log zerolog.Logger, getenv func(string) string, metrics prometheus.Registerer) (paddock.Registry, func(), error) {
	l, err := local.New(local.Config{Root: localRoot, Logger: log, Egress: local.EgressConfig{Registerer: metrics}})
	if err != nil {
		return nil, nil, fmt.Errorf("local provider: %w", err)
	}
	reg := paddock.Registry{
		paddock.ProviderLocal: l,
		paddock.ProviderFake:  fake.New(),
	}
	hosted := map[paddock.Provider]func() (paddock.Adapter, error){}
	if token := getenv("SPRITES_TOKEN"); token != "" {
		checkpoints, _ := strconv.ParseBool(getenv("SPRITES_CHECKPOINTS"))
		hosted[paddock.ProviderSprites] = func() (paddock.Adapter, error) {
			return sprites.New(sprites.Config{Token: paddock.NewSecret(token), BaseURL: getenv("SPRITES_BASE_URL"),
				CheckpointCreation: checkpoints, Logger: log})
		}
	}
	if key := getenv("E2B_API_KEY"); key != "" {
		hosted[paddock.ProviderE2B] = func() (paddock.Adapter, error) {
			return e2b.New(e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: getenv("E2B_BASE_URL"),
				Template: getenv("E2B_TEMPLATE"), User: getenv("E2B_USER"), Logger: log})
		}
	}
	if key := getenv("DAYTONA_API_KEY"); key != "" {
		hosted[paddock.ProviderDaytona] = func() (paddock.Adapter, error) {
			return daytona.New(daytona.Config{APIKey: paddock.NewSecret(key), APIURL: getenv("DAYTONA_API_URL"),
				Snapshot: getenv("DAYTONA_SNAPSHOT"), Logger: log})
		}
	}
	for p, build := range hosted {
		a, err := build()
		if err != nil {
			_ = l.Close()
			return nil, nil, fmt.Errorf("%s provider: %w", p, err)
		}
		reg[p] = a
	}
	closers := []func(){func() { _ = l.Close() }}
	if d := Docker(getenv, log, metrics); d != nil {
		reg[paddock.ProviderDocker] = d
		closers = append(closers, func() { _ = d.Close() })
	}
	return reg, func() {
		for _, c := range closers {
			c()
		}
	}, nil
}

// pingWait bounds how long Docker waits for a docker engine to answer.
// An absent engine refuses at once; the wait only matters for a busy one
// (CI's engine answers slowly while the docker tests load it).
const pingWait = 10 * time.Second

// Docker returns a docker adapter when an engine answers within
// pingWait, else nil. An image built by cmd/paddock-image (the default,
// or PADDOCK_DOCKER_IMAGE if it was) carries the helpers: watch and
// network policies are offered.
func Docker(getenv func(string) string, log zerolog.Logger, metrics prometheus.Registerer) *docker.Adapter {
	cfg := docker.Config{Host: getenv("DOCKER_HOST"), Image: getenv("PADDOCK_DOCKER_IMAGE"), Logger: log,
		Egress: docker.EgressConfig{Registerer: metrics}}
	probe, err := docker.New(cfg)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingWait)
	defer cancel()
	if probe.Ping(ctx) != nil {
		_ = probe.Close()
		return nil
	}
	if cfg.Image == "" || !probe.ImageBuiltByPaddock(ctx) {
		return probe
	}
	_ = probe.Close()
	cfg.Helpers = true
	d, err := docker.New(cfg)
	if err != nil {
		return nil
	}
	return d
}
