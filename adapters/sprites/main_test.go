package sprites_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/secretscan"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// captured holds every log line of every adapter the tests build, and the
// text of every error they inspect, so TestMain can prove that no token
// reached any of them.
var captured = secretscan.New()

// testLogger logs everything, at debug level, into the capture.
func testLogger() zerolog.Logger { return captured.Logger() }

func TestMain(m *testing.M) { captured.Main(m, "token") }

// build is sprites.New, failing the test on an error.
func build(t testing.TB, cfg sprites.Config) *sprites.Adapter {
	t.Helper()
	a, err := sprites.New(cfg)
	require.NoError(t, err)
	return a
}
