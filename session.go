package paddock

import "time"

// Session is a detachable command living in a sandbox (contract section 4).
// ID is opaque and matches SessionIDPattern; Command is the full command line,
// path and arguments joined by single spaces. There is deliberately no
// "attached" flag: a detached session is exactly what Attach recovers.
type Session struct {
	ID             string    `json:"id"`
	Name           string    `json:"name,omitempty"` // the SpawnOpts.Name it was started with, if any
	Command        string    `json:"command,omitempty"`
	CreatedAt      time.Time `json:"created_at,omitzero"`
	LastActivityAt time.Time `json:"last_activity_at,omitzero"`
	TTY            bool      `json:"tty,omitempty"`
}
