// Package adapters holds one package per place a sandbox can live, each
// laid out the same way (docs/adapters.md), so that a reader, or the
// author of the next adapter, knows where everything is:
//
//	doc.go          the package's contract
//	config.go       Config, its defaults, and New(Config) (*Adapter, error)
//	adapter.go      the Adapter type: Provider, Capabilities, BuildHandle
//	sandbox.go      Create, CreateNew, Get, Destroy, DestroyOnce, ListAllNames,
//	                Suspend, Resume, ApplyNetworkPolicy, PublicURL, heartbeats
//	exec.go         Exec
//	stream.go       Spawn and the stream it returns
//	session.go      ListSessions, Attach, TerminateSession
//	files.go        WriteFile, ReadFile, HostPath
//	filemanager.go  ListDir, Stat, Remove, Rename, MakeDir
//	watch.go        Watch
//	expose.go       Expose, Revoke, the previews
//	checkpoints.go  CreateCheckpoint, RestoreCheckpoint, ListCheckpoints,
//	                CreateCheckpointOnce
//	lease.go        the facts of leases (paddock.LeaseKeeper): SandboxFacts,
//	                RenewLeases, Reclaim, StopIdle
//	<p>test/        what a test needs of the provider: a loopback server
//	                speaking its protocol, or the real engine found
//
// A file for an optional role exists only where the adapter offers it;
// files of the adapter's own mechanics (a wire protocol, a journal) are
// named for what they hold. A file built for some systems only carries
// the system as a suffix (watch_linux.go). No adapter imports the runtime
// (actors, supervisor) or the conformance suite: the suite is for their
// tests. TestEveryAdapterHasTheShape holds every adapter to all of this.
package adapters
