package paddock

import "strings"

// Preconditions of required operations. The facade runs the matching check
// before it touches the adapter, so bad input is an *InvalidError and an
// unadvertised feature is ErrNotSupported, whatever the adapter would do.

// CheckCreate validates a sandbox name.
func CheckCreate(name string) error {
	if !ValidSandboxName(name) {
		return &InvalidError{Detail: DetailSandboxName}
	}
	return nil
}

// CheckExec validates an Exec request.
func CheckExec(cmd Cmd, opts ExecOpts) error {
	if err := cmd.Validate(); err != nil {
		return err
	}
	return opts.Validate()
}

// CheckSpawn validates a Spawn request and its capability gates: TTY needs
// CapTTY and a Name needs CapNamedSpawn.
func CheckSpawn(a Adapter, cmd Cmd, opts SpawnOpts) error {
	if err := cmd.Validate(); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.TTY && !Supports(a, CapTTY) {
		return ErrNotSupported
	}
	if opts.Name != "" && !Supports(a, CapNamedSpawn) {
		return ErrNotSupported
	}
	return nil
}

// CheckSessions gates ListSessions on CapAttach.
func CheckSessions(a Adapter) error {
	if !Supports(a, CapAttach) {
		return ErrNotSupported
	}
	return nil
}

// CheckAttach validates an Attach request: the id must match
// SessionIDPattern and the adapter advertise CapAttach.
func CheckAttach(a Adapter, sessionID string) error {
	if !ValidSessionID(sessionID) {
		return &InvalidError{Detail: DetailSessionID}
	}
	return CheckSessions(a)
}

// CheckPath validates a file path inside a sandbox: absolute, with no NUL
// byte.
func CheckPath(path string) error {
	if !strings.HasPrefix(path, "/") || strings.IndexByte(path, 0) >= 0 {
		return &InvalidError{Detail: DetailPath + ": must be absolute"}
	}
	return nil
}
