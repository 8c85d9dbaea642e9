package daytona

import (
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/restores"
	"github.com/paddockhq/paddock/adapters/internal/snapshots"
	"github.com/rs/zerolog"
)

// The optional interfaces the adapter implements.
var _ interface {
	paddock.Adapter
	paddock.ExecLimiter
	paddock.LeaseKeeper
	paddock.PolicyApplier
	paddock.FileManager
} = (*Adapter)(nil)

// errNoKey is the answer of every call without a configured key.
var errNoKey = &paddock.DeniedError{Detail: "daytona: no API key configured"}

// Adapter speaks to Daytona. It is safe for concurrent use. No client
// follows a redirect.
type Adapter struct {
	cfg          Config
	log          zerolog.Logger
	rest         *httpx.REST  // control-plane calls
	client       *http.Client // ordinary calls, bounded by Timeout
	streaming    *http.Client // log follows and file bodies: no overall timeout
	poll         time.Duration
	fileTransfer // WriteFile, ReadFile
	limits       paddock.CheckpointLimits
	gone         *snapshots.Gone   // since when checkpoints' sandboxes are gone
	restores     *restores.Counter // the restores this adapter began, by name
}

// authorize sets the credential of a request to either plane.
func (a *Adapter) authorize(req *http.Request) error {
	if a.cfg.APIKey.IsZero() {
		return errNoKey
	}
	key := a.cfg.APIKey.Reveal()
	req.Header.Set("Authorization", "Bearer "+key)
	if a.cfg.OrganizationID != "" && isJWT(key) {
		req.Header.Set("X-Daytona-Organization-ID", a.cfg.OrganizationID)
	}
	return nil
}

// isJWT reports whether a credential is a JWT (three dot-separated
// base64url parts, a JSON header first) rather than an API key.
func isJWT(s string) bool {
	return strings.HasPrefix(s, "eyJ") && strings.Count(s, ".") == 2
}

// String names the adapter and its API URL; no printed form of an adapter
// shows its key.
func (a Adapter) String() string { return "daytona.Adapter(" + a.cfg.APIURL + ")" }

// GoString is String, for %#v.
func (a Adapter) GoString() string { return a.String() }

// Capabilities are what Daytona offers through this adapter: suspend
// (stop/start), network policy, attach (sessions) and the file
// operations. No signals (the toolbox has no route that sends one). No
// terminal, so no resize: the daemon's PTY route starts a shell, not a
// given command (the command would be typed into it, its line echoed and
// the exit the shell's), and Daytona's own SDK dials a PTY route the
// recorded daemon does not serve, so there is no one protocol to follow.
// No watch: the recorded daemon has no route for it.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	return paddock.NewCapabilitySet(paddock.CapSuspend, paddock.CapNetworkPolicy, paddock.CapAttach, paddock.CapFiles,
		paddock.CapCheckpoint, paddock.CapFork)
}

// Provider returns "daytona".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderDaytona }

// BuildHandle returns {daytona, name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: paddock.ProviderDaytona, Name: name}
}
