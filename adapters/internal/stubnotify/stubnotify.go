// Package stubnotify watches a directory of a loopback server's sandbox
// as the providers' daemons do (fsnotify, so inotify on Linux): each
// change named relative to the watched root, with fsnotify's kinds.
package stubnotify

// Kind is a change's kind, as fsnotify names it.
type Kind int

// The kinds of change: a name created (or moved in), written, removed,
// renamed away (or moved out), or its attributes changed.
const (
	Create Kind = iota + 1
	Write
	Remove
	Rename
	Chmod
)

// String is fsnotify's word for the kind.
func (k Kind) String() string {
	switch k {
	case Create:
		return "create"
	case Write:
		return "write"
	case Remove:
		return "remove"
	case Rename:
		return "rename"
	case Chmod:
		return "chmod"
	}
	return "unknown"
}

// Change is one change under the watched root: its name relative to the
// root, slash-separated.
type Change struct {
	Name string
	Kind Kind
}
