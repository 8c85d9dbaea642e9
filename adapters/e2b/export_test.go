package e2b

import "github.com/paddockhq/paddock"

// JournalCmd is the wrapper of a detachable spawn of cmd in session id.
func JournalCmd(id string, cmd paddock.Cmd) paddock.Cmd { return journalCmd(id, cmd) }

// ParseExit reads an exit record.
func ParseExit(b []byte) (int, bool) { return parseExit(b) }

// JournalDir is a session's directory under the home.
func JournalDir(id string) string { return journalDir(id) }
