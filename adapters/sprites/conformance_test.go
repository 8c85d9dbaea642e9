package sprites_test

import (
	"cmp"
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// fixtures are the shell fixtures (spritestest runs real processes) plus
// the server's scripted dropped connection.
func fixtures() conformance.Fixtures {
	f := conformance.ShellFixtures()
	drop := paddock.NewCmd(spritestest.DropCommand, "partial")
	f.SpawnDrop = &drop
	return f
}

func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: fixtures()}
}

// checkpointModes are the two settings the checkpoint cases run under:
// the whole suite with checkpoints on, and with them off only the cases
// whose promise that changes (the rest would repeat the first run).
var checkpointModes = map[string]struct {
	edit  func(*sprites.Config)
	cases []string
}{
	"checkpoints on":  {edit: withCheckpoints},
	"checkpoints off": {edit: func(*sprites.Config) {}, cases: []string{"20", "26"}},
}

// slowMachine gives calls two minutes: CI runs this suite's 500-turn load
// case beside the local and E2B ones on two cores, where one create took
// over 30 s (the default) while each took 2.4 s alone; the case is about
// lost bytes, not latency.
func slowMachine(c *sprites.Config) { c.Timeout = 2 * time.Minute }

func TestConformance(t *testing.T) {
	t.Parallel()
	for name, mode := range checkpointModes {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			cfg := suiteConfig(newAdapter(t, srv, mode.edit, slowMachine))
			cfg.Cases, cfg.Except = mode.cases, []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
			conformance.Run(t, cfg)
		})
	}
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	for name, mode := range checkpointModes {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			a := newAdapter(t, srv, mode.edit, slowMachine)
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderSprites: a}, Logger: testLogger()})
			require.NoError(t, err)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.NoError(t, rt.Shutdown(ctx))
			})
			cfg := suiteConfig(nil)
			cfg.Cases = mode.cases
			conformance.RunRuntime(t, rt, paddock.ProviderSprites, cfg)
		})
	}
}

// TestLive runs the conformance suite against the real Sprites API with the
// token in SPRITES_TOKEN. It creates and destroys sprites named
// paddock-live-<run>-<n>. SPRITES_CHECKPOINTS=1 also runs the checkpoint
// cases (they write checkpoints on those sprites).
func TestLive(t *testing.T) {
	t.Parallel()
	checkpoints, _ := strconv.ParseBool(os.Getenv("SPRITES_CHECKPOINTS"))
	conformance.RunLive(t, conformance.Live{
		Credential: "SPRITES_TOKEN", Optional: []string{"SPRITES_BASE_URL", "SPRITES_CHECKPOINTS=1"}, TurnsEnv: "SPRITES_LOAD_TURNS", Turns: 10,
		Adapter: func(token string) (paddock.Adapter, error) {
			return sprites.New(sprites.Config{Token: paddock.NewSecret(captured.Secret(token)), BaseURL: os.Getenv("SPRITES_BASE_URL"),
				CheckpointCreation: checkpoints, Logger: testLogger()})
		},
	})
}

// The service RunLeases' child processes reach.
const (
	leaseURLEnv   = "PADDOCK_SPRITES_LEASE_URL"
	leaseTokenEnv = "PADDOCK_SPRITES_LEASE_TOKEN"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	url, token := os.Getenv(leaseURLEnv), os.Getenv(leaseTokenEnv)
	if url == "" {
		srv := newServer(t)
		url, token = srv.URL(), srv.Token()
	}
	conformance.RunLeases(t, leaseSetup(t, url, token))
}

// TestLiveLeases runs RunLeases against the real Sprites service with the
// token in SPRITES_TOKEN (SPRITES_BASE_URL optional).
func TestLiveLeases(t *testing.T) {
	t.Parallel()
	token := captured.Secret(conformance.LiveCredential(t, "SPRITES_TOKEN", "SPRITES_BASE_URL"))
	url := cmp.Or(os.Getenv("SPRITES_BASE_URL"), sprites.DefaultBaseURL)
	conformance.RunLeases(t, leaseSetup(t, url, token))
}

// leaseSetup is RunLeases on the Sprites API at url with token.
func leaseSetup(t *testing.T, url, token string) conformance.LeaseSetup {
	raw := adaptertest.Caller(t, url, "Authorization", "Bearer "+token)
	call := func(method, path, body string) int { status, _ := raw(method, path, body); return status }
	return conformance.LeaseSetup{
		ChildEnv: []string{leaseURLEnv + "=" + url, leaseTokenEnv + "=" + token},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := sprites.New(sprites.Config{Token: paddock.NewSecret(token), BaseURL: url, Logger: testLogger()})
			require.NoError(t, err)
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			require.Equal(t, http.StatusCreated, call(http.MethodPost, "/v1/sprites", `{"name":"`+name+`","labels":["team=ops"]}`))
			t.Cleanup(func() { call(http.MethodDelete, "/v1/sprites/"+name, "") })
			return func() bool { return call(http.MethodGet, "/v1/sprites/"+name, "") == http.StatusOK }
		},
	}
}

func TestReapPastMaxAge(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	conformance.RunMaxAge(t, newAdapter(t, srv, func(c *sprites.Config) { c.MaxAge = time.Second }), time.Second)
}
