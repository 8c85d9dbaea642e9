// Package local runs sandboxes on this machine, with no account, daemon or
// network: a sandbox is a directory (under the root, by default in the
// user's cache directory) and its commands are real host processes. It is
// Paddock's embedded default and the fastest real adapter for tests.
//
// Commands are argv, never a shell line, started from a minimal clean
// environment (nothing of the host process's environment, so none of its
// secrets), in the sandbox's files directory, each in its own process
// group, with a stdin pipe or a PTY. Every spawn is a detachable session
// whose output is journaled on disk record by record (stream and chunk
// boundaries kept), so Attach replays from byte zero and then tails, and a
// later runtime can still attach to finished sessions and read their exit
// codes. When a command's leader exits, its output is read to the end
// before the exit is recorded: processes it left that still hold the
// output open get a short grace (WithExitGrace), then they are killed, and
// what they had written is still read. Processes that let go of the output
// (a daemon writing to a log) are left alone. A holder that outlives the
// kill (WithDrainLimit) ends the command with output_truncated, never with
// an exit that would pass for a whole output.
//
// Processes live at a runtime restart: they are killed with the runtime
// (the leader has a parent-death signal, and an isolated command's whole
// namespace dies with its shim); a later runtime recovers such a session on
// first attach or terminate: it kills whatever of it is left and records
// closed_before_exit, so attachers get the output, then that verdict, never
// a made-up exit.
//
// Isolation, where the host allows it (Linux, as root or with unprivileged
// user namespaces): each command runs under a small init shim (this package
// re-executes the program's own binary for it) in fresh mount, PID,
// network, UTS and IPC namespaces, with only loopback unless the sandbox was
// created with egress=unrestricted, a process limit (a pids cgroup as root,
// RLIMIT_NPROC otherwise) and a file-size limit. Where namespaces are not
// available the adapter still works, says so once in the log, and reports it
// in Info.Raw. This is containment for well-meaning code, not a boundary
// against an attacker: commands share the host's kernel, filesystem and
// user. For untrusted code use the docker adapter with gVisor.
//
// Files are confined to the sandbox's files directory: a path with "..", or
// through a symbolic link leading out, is invalid. HostPath maps a sandbox
// path to where a process sees it.
//
// It offers no network policy (egress is chosen at creation: loopback only,
// or with egress=unrestricted the host's whole network), no public URL and
// no checkpoints; the facade answers not_supported (no public URL) for
// those.
//
// The package has an init function that acts only in a process this
// package started as its isolation shim (marked by a private environment
// variable); in any other process it does nothing.
package local
