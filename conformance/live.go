package conformance

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
)

// Live describes a run of the suite against a real service: it runs only
// when the credential's environment variable is set, and skips with a
// message that names every variable it reads otherwise.
type Live struct {
	// Credential is the environment variable holding the service's
	// credential (an API key or token).
	Credential string
	// Optional are the other variables the adapter reads, for the skip
	// message.
	Optional []string
	// TurnsEnv sizes the load case (default Turns: an account allows few
	// sandboxes at a time).
	TurnsEnv string
	Turns    int
	// Adapter makes the adapter under test from the credential.
	Adapter func(credential string) (paddock.Adapter, error)
	// SpawnOptions are merged into every spawn, as in Config.
	SpawnOptions paddock.SpawnOpts
	// Configure, if set, changes the configuration last (a fixture of the
	// adapter's own, say).
	Configure func(*Config)
}

// RunLive runs the suite against the service l describes, with sandboxes
// named paddock-live-<run>-<n> and the patience a real service needs, or
// skips t when the credential is not set.
func RunLive(t *testing.T, l Live) {
	t.Helper()
	credential := os.Getenv(l.Credential)
	if credential == "" {
		t.Skipf("live test skipped: set %s (and optionally %s) to run the conformance suite against the real service",
			l.Credential, strings.Join(append(l.Optional, l.TurnsEnv), ", "))
	}
	turns := l.Turns
	if v, err := strconv.Atoi(os.Getenv(l.TurnsEnv)); err == nil && v > 0 {
		turns = v
	}
	run := make([]byte, 3)
	_, _ = rand.Read(run)
	var n atomic.Int64
	a, err := l.Adapter(credential)
	if err != nil {
		t.Fatalf("live test: the adapter: %v", err)
	}
	cfg := Config{
		Adapter:  a,
		Fixtures: ShellFixtures(),
		Name: func() string {
			return "paddock-live-" + hex.EncodeToString(run) + "-" + strconv.FormatInt(n.Add(1), 10)
		},
		SpawnOptions:     l.SpawnOptions,
		FrameTimeout:     60 * time.Second,
		OperationTimeout: 3 * time.Minute,
		Load:             Load{Turns: turns, Timeout: 15 * time.Minute},
	}
	if l.Configure != nil {
		l.Configure(&cfg)
	}
	Run(t, cfg)
}
