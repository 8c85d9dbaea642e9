// Package stubfs is what the loopback provider servers (e2btest,
// daytonatest) share to give a sandbox's processes a filesystem of their
// own: the sandbox's directory holds its home and tmp, and where mount
// namespaces work its processes see them at /home and /tmp. A sandbox's
// Space holds one mount namespace that every process of the sandbox
// enters, so the kernel makes and tears down one namespace per sandbox,
// not one per command: it serialises those operations machine-wide, and
// hundreds of commands at once each with a namespace of its own queued
// behind each other for tens of seconds.
package stubfs

import (
	"errors"
	"os/exec"
	"sync"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// Space is the filesystem one sandbox's processes see. Use NewSpace; its
// methods are safe for concurrent use.
type Space struct {
	dir    string
	mapped bool

	mu      sync.Mutex
	holder  *holder // the process holding the namespace; nil until the first command
	retired bool    // the sandbox is gone: no command starts in the space again
}

// errRetired is Command's answer once the space is retired.
var errRetired = errors.New("stubfs: the sandbox is gone")

// NewSpace is the space of the sandbox whose directory is dir (holding
// its home and tmp): mapped when Probe said mount namespaces work here,
// else its processes see this machine's paths.
func NewSpace(dir string, mapped bool) *Space { return &Space{dir: dir, mapped: mapped} }

// Command is `/bin/sh -c 'exec "$0" "$@"' name args...` in the space, in
// the directory cwd (a path on this machine), as the providers' daemons
// start commands (a missing program is a start, a message on stderr and
// exit 127, never a start failure). Where the space is mapped, the shell
// enters the sandbox's mount namespace first, making it on first use. A
// retired space starts nothing.
func (s *Space) Command(cwd, name string, args ...string) (*exec.Cmd, error) {
	argv := append([]string{"/bin/sh", "-c", `exec "$0" "$@"`, name}, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired {
		return nil, errRetired
	}
	if s.mapped {
		if s.holder == nil || s.holder.ended() {
			h, err := startHolder(s.dir)
			if err != nil {
				return nil, err
			}
			s.holder = h
		}
		argv = s.holder.enter(cwd, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cwd
	cmd.SysProcAttr = stubproc.GroupAttr()
	return cmd, nil
}

// Close ends the process holding the namespace; commands still in it keep
// it until they end. A later Command makes a new one.
func (s *Space) Close() { s.end(false) }

// Retire is Close for a sandbox that is gone: a later Command is refused,
// so a command still on its way cannot start a holder nobody ends.
func (s *Space) Retire() { s.end(true) }

func (s *Space) end(retire bool) {
	s.mu.Lock()
	h := s.holder
	s.holder = nil
	s.retired = s.retired || retire
	s.mu.Unlock()
	if h != nil {
		h.stop()
	}
}
