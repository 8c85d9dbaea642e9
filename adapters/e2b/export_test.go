package e2b

import (
	"context"

	"github.com/paddockhq/paddock"
)

// Extend is the heartbeat: the sandbox's TTL set to the configured one
// from now.
func (a *Adapter) Extend(ctx context.Context, h paddock.Handle) error {
	l, err := a.mustFind(ctx, h)
	if err != nil {
		return err
	}
	return a.extend(ctx, l.SandboxID)
}

// JournalCmd is the wrapper of a detachable spawn of cmd in session id.
func JournalCmd(id string, cmd paddock.Cmd) paddock.Cmd { return journalCmd(id, cmd) }

// ParseExit reads an exit record.
func ParseExit(b []byte) (int, bool) { return parseExit(b) }

// JournalDir is a session's directory under the home.
func JournalDir(id string) string { return journalDir(id) }
