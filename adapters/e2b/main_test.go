package e2b_test

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/secretscan"
	"github.com/rs/zerolog"
)

var ctx = context.Background()

// captured holds every log line of every adapter and runtime the tests
// build, and the text of every error they inspect, so TestMain can prove
// that no API key reached any of them.
var captured = secretscan.New()

// testLogger logs everything, at debug level, into the capture.
func testLogger() zerolog.Logger { return captured.Logger() }

func TestMain(m *testing.M) { captured.Main(m, "API key") }

// build is e2b.New, failing the test on an error.
func build(t testing.TB, cfg e2b.Config) *e2b.Adapter { return adaptertest.New(t, e2b.New, cfg) }
