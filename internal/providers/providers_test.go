package providers_test

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/providers"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The hosted providers join only when their credentials are set.
func TestRegistryFollowsTheEnvironment(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		want []paddock.Provider
	}{
		{"no credentials", map[string]string{"DOCKER_HOST": "unix:///nonexistent/docker.sock"}, []paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal}},
		{"a Sprites token", map[string]string{"SPRITES_TOKEN": "tok", "SPRITES_CHECKPOINTS": "1", "DOCKER_HOST": "unix:///nonexistent/docker.sock"},
			[]paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal, paddock.ProviderSprites}},
		{"an E2B key", map[string]string{"E2B_API_KEY": "e2b_key", "E2B_TEMPLATE": "code-interpreter", "DOCKER_HOST": "unix:///nonexistent/docker.sock"},
			[]paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal, paddock.ProviderE2B}},
		{"a Daytona key", map[string]string{"DAYTONA_API_KEY": "dtn_key", "DOCKER_HOST": "unix:///nonexistent/docker.sock"},
			[]paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal, paddock.ProviderDaytona}},
		{"both hosted keys", map[string]string{"E2B_API_KEY": "e2b_key", "SPRITES_TOKEN": "tok", "DOCKER_HOST": "unix:///nonexistent/docker.sock"},
			[]paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal, paddock.ProviderSprites, paddock.ProviderE2B}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg, closeReg, err := providers.Registry(t.TempDir(), zerolog.Nop(), func(k string) string { return c.env[k] }, nil)
			require.NoError(t, err)
			t.Cleanup(closeReg)
			var got []paddock.Provider
			for p := range reg {
				got = append(got, p)
			}
			require.ElementsMatch(t, c.want, got)
			if s, ok := reg[paddock.ProviderSprites]; ok && c.env["SPRITES_CHECKPOINTS"] == "1" {
				require.True(t, s.Capabilities().Has(paddock.CapCheckpoint), "SPRITES_CHECKPOINTS=1 turns checkpoints on")
			}
		})
	}
}

// With an engine answering at DOCKER_HOST (CI starts one), docker joins.
func TestRegistryOffersDockerWhenAnEngineAnswers(t *testing.T) {
	t.Parallel()
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		t.Skip("DOCKER_HOST is not set: no engine to find")
	}
	reg, closeReg, err := providers.Registry(t.TempDir(), zerolog.Nop(), os.Getenv, nil)
	require.NoError(t, err)
	t.Cleanup(closeReg)
	d, ok := reg[paddock.ProviderDocker]
	require.True(t, ok, "an engine answers at %s", host)
	if image := os.Getenv("PADDOCK_DOCKER_IMAGE"); image != "" {
		assert.True(t, d.Capabilities().Has(paddock.CapNetworkPolicy), "%s was built by paddock-image: it carries the helpers", image)
	}
}
