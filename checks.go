package paddock

import "strings"

// Preconditions of required operations. The facade runs the matching check
// before it touches the adapter, so bad input is an *InvalidError and an
// unadvertised feature is ErrNotSupported, whatever the adapter would do.

// ValidateExec validates an Exec request.
func ValidateExec(cmd Cmd, opts ExecOpts) error {
	if err := cmd.Validate(); err != nil {
		return err
	}
	return opts.Validate()
}

// ValidateSpawn validates a Spawn request and its capability gates: TTY needs
// CapTTY and a Name needs CapNamedSpawn.
func ValidateSpawn(a Adapter, cmd Cmd, opts SpawnOpts) error {
	if err := cmd.Validate(); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.TTY {
		if err := Require(a, CapTTY); err != nil {
			return err
		}
	}
	if opts.Name != "" {
		return Require(a, CapNamedSpawn)
	}
	return nil
}

// ValidateAttach validates an Attach request: the id must match
// SessionIDPattern and the adapter advertise CapAttach.
func ValidateAttach(a Adapter, sessionID string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	return Require(a, CapAttach)
}

// ValidatePath validates a file path inside a sandbox: absolute, with no NUL
// byte.
func ValidatePath(path string) error {
	if !strings.HasPrefix(path, "/") || strings.IndexByte(path, 0) >= 0 {
		return &InvalidError{Detail: DetailPath + ": must be absolute"}
	}
	return nil
}
