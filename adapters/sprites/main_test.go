package sprites_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/secretscan"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// captured holds every log line of every adapter the tests build, and the
// text of every error they inspect, so TestMain can prove that no token
// reached any of them.
var captured = secretscan.New()

// testLogger logs everything, at debug level, into the capture.
func testLogger() zerolog.Logger { return captured.Logger() }

func TestMain(m *testing.M) {
	code := m.Run()
	if n := captured.Leaks(); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d token(s) appeared in the captured logs and errors\n", n)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: leaked goroutines: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
