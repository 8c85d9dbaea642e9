package main

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// The hosted providers join the demo only when their credentials are set.
func TestRegistryFollowsTheEnvironment(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want []paddock.Provider
	}{
		{"no credentials", nil, []paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal}},
		{"a Sprites token", map[string]string{"SPRITES_TOKEN": "tok", "SPRITES_CHECKPOINTS": "1"},
			[]paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal, paddock.ProviderSprites}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg, closeReg, err := registry(t.TempDir(), zerolog.Nop(), func(k string) string { return c.env[k] })
			require.NoError(t, err)
			t.Cleanup(closeReg)
			var got []paddock.Provider
			for p := range reg {
				got = append(got, p)
			}
			require.ElementsMatch(t, c.want, got)
			if s, ok := reg[paddock.ProviderSprites]; ok {
				require.True(t, s.Capabilities().Has(paddock.CapCheckpoint), "SPRITES_CHECKPOINTS=1 turns checkpoints on")
			}
		})
	}
}
