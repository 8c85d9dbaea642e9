package daytona_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/secretscan"
	"github.com/rs/zerolog"
)

// captured holds every log line of every adapter the tests build, and the
// text of every error they inspect, so TestMain can prove that no API key
// reached any of them.
var captured = secretscan.New()

// testLogger logs everything, at debug level, into the capture.
func testLogger() zerolog.Logger { return captured.Logger() }

func TestMain(m *testing.M) { captured.Main(m, "API key") }

// build is daytona.New, failing the test on an error.
func build(t testing.TB, cfg daytona.Config) *daytona.Adapter {
	return adaptertest.New(t, daytona.New, cfg)
}
