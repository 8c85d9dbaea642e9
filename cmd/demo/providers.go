package main

import (
	"fmt"

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
