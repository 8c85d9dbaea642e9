// Package docker is the Paddock adapter for a Docker engine: each sandbox
// is a hardened container (gVisor when the engine has it; read-only root,
// no capabilities, no privilege gain, a non-root user, CPU, memory and
// process limits, scratch only on size-capped tmpfs drawn from the memory
// budget, no network: loopback only, and out only by its proxy under its
// network policy, unless unrestricted egress is asked at creation),
// and its identity lives in labels alone, so any process can manage any
// sandbox.
//
// Commands run through the engine's exec API. Exec is one attached exec
// (stdout and stderr demultiplexed, the exit code from the engine, the
// command killed inside the sandbox past its timeout). Spawn starts a
// session journaled on the sandbox's scratch space: the command runs
// under a runner in a process group of its own, its output goes to
// journal files, and every subscriber (the spawner, each Attach) follows
// the journal from byte zero, so a session is detachable and replayable,
// live or finished, until the sandbox stops. A follower that ends before
// its session (an exec the engine cannot start, or a shell whose fork is
// refused, when the sandbox is at its process limit) is replaced by one
// starting at the bytes already delivered. TTY sessions run on the exec's
// terminal instead: listed and terminable, not journaled.
//
// Reap enforces idle timeouts (stop), maximum ages (destroy) and removes
// orphans whose owner runtime is gone, from labels and an activity stamp
// kept in a root-owned directory the sandbox cannot write. Expose mints a
// signed preview that Previews() serves, reaching the port through the
// engine even with no network.
//
// Network policies are enforced outside the sandbox (egress.go,
// docs/egress.md): paddock-egress, a helper inside, carries the
// sandbox's proxy connections over an exec's stdio to the adapter's
// gate, which decides by name.
//
// A checkpoint is a tar archive of the scratch space the adapter keeps on
// its own host (checkpoints.go): files only. A restore stops the
// sandbox's commands and puts the files back; a fork is a new sandbox
// holding them (on an engine of this machine the archive is mounted into
// the fork read-only, at /run/paddock/fork.tar, and extracted from there;
// elsewhere it goes through the exec's stdin).
//
// It offers no public URL; the facade answers not_supported (no public
// URL) for it.
package docker
