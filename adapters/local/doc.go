// Package local runs sandboxes on this machine, with no account, daemon or
// network: a sandbox is a directory (under the root, by default in the
// user's cache directory) and its commands are real host processes. It is
// Paddock's embedded default and the fastest real adapter for tests.
//
// A sandbox is one machine: its commands are started by one long-lived
// init process of its own (this package re-executes the program's own
// binary for it), made on the sandbox's first command and kept until the
// sandbox is destroyed or the adapter closes, so the commands of a sandbox
// see each other's processes and share its loopback, as on a hosted
// provider or in a container. Commands are argv, never a shell line,
// started from a minimal clean environment (nothing of the host process's
// environment, so none of its secrets), in the sandbox's files directory,
// each in its own process group, with a stdin pipe or a PTY. A program
// the sandbox cannot run fails as under a shell (and as on the providers
// that start commands through one): the command prints why on stderr and
// exits 127 (no such program) or 126 (not an executable file). Every spawn
// is a detachable session whose output is journaled on disk record by
// record (stream and chunk boundaries kept; repetitive output compressed),
// so Attach replays from byte zero and then tails, and a later runtime can
// still attach to finished sessions and read their exit codes. A session's
// journal is capped (Config.SessionOutputLimit): a session that reaches the
// cap is stopped, and every subscriber gets its output up to the cap, then
// session_output_limit. When a command's leader exits, its output is read
// to the end before the exit is recorded: processes it left that still
// hold the output open get a short grace (Config.ExitGrace), then they are
// killed, and what they had written is still read. Processes that let go
// of the output (a daemon writing to a log) are left running in the
// sandbox. A holder that outlives the kill (Config.DrainLimit) ends the
// command with output_truncated, never with an exit that would pass for a
// whole output.
//
// Nothing of a sandbox outlives it: its init is PID 1 of the sandbox's
// namespaces (isolated) or a child subreaper (unisolated), so whatever the
// commands leave behind (a setsid daemon, a double fork) stays its
// descendant; destroying the sandbox, closing the adapter, or the end of
// the program (the init's socket closes) kills them all. As root each
// session also gets a cgroup v2 leaf, so terminating a session kills what
// left its process group too; without root, terminating a session reaches
// its process group only, and its daemons end with the sandbox. A later
// runtime recovers a session left live by one that is gone on first attach
// or terminate: it kills whatever of it is left and records
// closed_before_exit, so attachers get the output, then that verdict,
// never a made-up exit.
//
// Isolation, where the host allows it (Linux, as root or with unprivileged
// user namespaces): a sandbox's init runs in fresh mount, PID, network, UTS
// and IPC namespaces, with only loopback unless the sandbox was created
// with egress=unrestricted, a process limit for the sandbox (a pids cgroup
// as root, RLIMIT_NPROC otherwise) and a file-size limit. Where namespaces
// are not available the adapter still works, says so once in the log, and
// reports it in Info.Raw. This is containment for well-meaning code, not a
// boundary against an attacker: commands share the host's kernel,
// filesystem and user. For untrusted code use the docker adapter with
// gVisor.
//
// Previews (Config.PreviewBaseURL, Previews): Expose mints a signed,
// expiring, revocable preview of a port, and the preview proxy reaches that
// port on the sandbox's own loopback (inside its network namespace when
// isolated).
//
// Files are confined to the sandbox's files directory: a path with "..", or
// through a symbolic link leading out, is invalid. HostPath maps a sandbox
// path to where a process sees it.
//
// Network policy (network_policy, advertised when isolated): an isolated
// sandbox's only way out is an HTTP proxy on 127.0.0.1:3128 in its network
// namespace, which its init listens on and hands to the adapter, and which
// commands are told of by HTTP_PROXY and HTTPS_PROXY. The adapter decides
// each connection by the name it asks for against the sandbox's policy
// (none applied: nothing), resolves and connects itself; ApplyNetworkPolicy
// takes effect at once and cuts open connections to names it no longer
// allows (docs/egress.md). A sandbox made with egress=unrestricted has the
// host's network and takes no policy; unisolated sandboxes share the
// host's network and the capability is not advertised.
//
// A checkpoint is a copy of a sandbox's files (reflinks where the
// filesystem shares blocks) taken with its processes stopped, kept under
// the root (checkpoints.go): files only. A restore stops the sandbox's
// commands and puts the files back; a fork is a new sandbox holding them.
//
// It offers no public URL; the facade answers not_supported (no public
// URL) for it.
//
// The package has an init function that acts only in a process this
// package started as a sandbox's init (marked by a private environment
// variable); in any other process it does nothing.
package local
