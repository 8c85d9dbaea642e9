package sprites

import (
	"net/http"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/restores"
	"github.com/rs/zerolog"
)

// The optional interfaces the adapter implements.
var _ interface {
	paddock.Adapter
	paddock.ExecLimiter
	paddock.LeaseKeeper
	paddock.CreateNewer
	paddock.DestroyOncer
	paddock.CheckpointOncer
	paddock.Checkpointer
	paddock.PolicyApplier
	paddock.PublicURLer
	paddock.SessionTerminator
	paddock.FileManager
} = (*Adapter)(nil)

// Adapter speaks to Sprites. It is safe for concurrent use. No client
// follows a redirect: the API sends none, and a 3xx is invalid.
type Adapter struct {
	cfg       Config
	log       zerolog.Logger
	rest      *httpx.REST       // ordinary calls: authorisation, answers, logging
	client    *http.Client      // ordinary calls
	policy    *http.Client      // the policy call: longer timeout, no pooled connections
	bound     *http.Client      // bounded operations: deadline per call, a connection per request
	streaming *http.Client      // streamed bodies (files, NDJSON): no overall timeout
	keep      keepalive         // exec sockets
	restores  *restores.Counter // the restores this adapter began, by sprite
}

// String names the adapter and its base URL; no printed form of an adapter
// shows its token.
func (a Adapter) String() string { return "sprites.Adapter(" + a.cfg.BaseURL + ")" }

// GoString is String, for %#v.
func (a Adapter) GoString() string { return a.String() }

// Provider returns "sprites".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderSprites }

// Capabilities are every capability Sprites offers; the checkpoint ones only
// while CheckpointCreation is on.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	caps := paddock.NewCapabilitySet(
		paddock.CapSuspend, paddock.CapNetworkPolicy, paddock.CapAttach, paddock.CapTTY, paddock.CapPublicURL,
		paddock.CapTerminateSession, paddock.CapForceTerminateSession, paddock.CapCreateNew, paddock.CapDestroyOnce,
		paddock.CapFiles, paddock.CapSignal, paddock.CapResize,
	)
	if a.cfg.CheckpointCreation {
		caps = caps.With(paddock.CapCheckpoint, paddock.CapCreateCheckpointOnce)
	}
	return caps
}

// BuildHandle returns {sprites, name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: paddock.ProviderSprites, Name: name}
}
