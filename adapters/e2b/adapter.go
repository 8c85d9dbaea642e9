package e2b

import (
	"net/http"

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
	paddock.Heartbeater
	paddock.FileManager
	paddock.DirWatcher
} = (*Adapter)(nil)

// errNoKey is the answer of every call without a configured key.
var errNoKey = &paddock.DeniedError{Detail: "e2b: no API key configured"}

// Adapter speaks to E2B. It is safe for concurrent use. No client follows
// a redirect.
type Adapter struct {
	cfg          Config
	log          zerolog.Logger
	rest         *httpx.REST  // control-plane calls
	client       *http.Client // ordinary calls, bounded by Timeout
	streaming    *http.Client // process streams and file bodies: no overall timeout
	fileTransfer              // WriteFile, ReadFile
	limits       paddock.CheckpointLimits
	gone         *snapshots.Gone   // since when checkpoints' sandboxes are gone
	restores     *restores.Counter // the restores this adapter began, by name
}

// String names the adapter and its base URL; no printed form of an
// adapter shows its key.
func (a Adapter) String() string { return "e2b.Adapter(" + a.cfg.BaseURL + ")" }

// GoString is String, for %#v.
func (a Adapter) GoString() string { return a.String() }

// Provider returns "e2b".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderE2B }

// Capabilities are what E2B offers through this adapter: suspend (pause),
// network policy, attach (through journals), a terminal on spawn that
// resizes, the file operations and watch (envd's WatchDir), checkpoints
// (snapshots) and forks. No signals: envd sends only TERM and KILL.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	return paddock.NewCapabilitySet(paddock.CapSuspend, paddock.CapNetworkPolicy, paddock.CapAttach, paddock.CapTTY, paddock.CapFiles, paddock.CapResize, paddock.CapWatch,
		paddock.CapCheckpoint, paddock.CapFork)
}

// BuildHandle returns {e2b, name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: paddock.ProviderE2B, Name: name}
}
