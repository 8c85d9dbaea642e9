// Package stubfs is what the loopback provider servers (e2btest,
// daytonatest, spritestest) share to give a sandbox a filesystem of its
// own, seen the same way by its processes and by the server's file API.
//
// A sandbox's files live in a directory of this machine, its root. Where
// mount namespaces work (Probe), one process per sandbox, the holder,
// makes a mount namespace in which this machine's system directories
// (/usr, /bin, /lib..., /etc) are mounted read-only into the root, with
// the provider's users in its /etc/passwd and /etc/group, and /dev, /proc
// and /sys are this machine's; then it changes its root to the sandbox's
// root. Every command of the sandbox enters that namespace and root, and
// the file API reaches the same files through the holder
// (/proc/<holder>/root), so an absolute path means one file to both:
// /home/user is the sandbox's, /usr/bin/env this machine's (read-only,
// for both). One namespace per sandbox, not one per command: the kernel
// serialises making and tearing them down machine-wide, and hundreds of
// commands each with one of its own queued behind each other for tens of
// seconds.
//
// Where mount namespaces do not work, the space is not mapped: processes
// run on this machine's paths (their working directory is under the root,
// but an absolute path is this machine's) and the file API maps a path
// under the root. The servers say so in their documentation.
package stubfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// User is one of the provider's users in a sandbox.
type User struct {
	Name     string
	UID, GID int
	Home     string // an absolute path in the sandbox
}

// Config describes a sandbox's filesystem.
type Config struct {
	// Root is the directory of this machine holding the sandbox's own
	// files: its "/".
	Root string
	// Scratch is a directory of this machine, outside Root, for the
	// space's own files (its passwd and group).
	Scratch string
	// Users are the provider's users; each gets its home (made under Root
	// when missing) and a line in the sandbox's /etc/passwd.
	Users []User
	// Mapped is Probe's answer for this machine.
	Mapped bool
	// Binds are directories of this machine shown inside the sandbox, at
	// their At paths, to its processes and its file API alike (a mapped
	// space only: elsewhere the mount points stay empty directories).
	Binds []Bind
}

// Bind shows Host, a directory of this machine, at At, an absolute path
// inside the sandbox.
type Bind struct {
	Host, At string
}

// Space is the filesystem one sandbox's processes and file API see. Use
// NewSpace; its methods are safe for concurrent use.
type Space struct {
	cfg Config

	mu      sync.Mutex
	holder  *holder // the process holding the namespace; nil until first needed
	retired bool    // the sandbox is gone: nothing starts in the space again
}

// errRetired is the answer of Command and Path once the space is retired.
var errRetired = errors.New("stubfs: the sandbox is gone")

// systemDirs are this machine's directories a mapped space shows
// read-only at the same paths; mounts are those shown as they are.
var (
	systemDirs = []string{"bin", "sbin", "usr", "lib", "lib32", "lib64", "libx32", "etc"}
	mounts     = []string{"dev", "proc", "sys"}
)

// NewSpace prepares the sandbox's root (the users' homes, and in a mapped
// space the mount points of this machine's directories) and the space's
// passwd and group.
func NewSpace(cfg Config) (*Space, error) {
	if !filepath.IsAbs(cfg.Root) || !filepath.IsAbs(cfg.Scratch) {
		return nil, errors.New("stubfs: root and scratch must be absolute")
	}
	for _, d := range []string{cfg.Root, cfg.Scratch, filepath.Join(cfg.Root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(filepath.Join(cfg.Root, "tmp"), 0o777|os.ModeSticky); err != nil {
		return nil, err
	}
	var passwd, group strings.Builder
	shell := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "/bin/bash"
	}
	for _, u := range cfg.Users {
		home := filepath.Join(cfg.Root, filepath.Clean("/"+u.Home))
		if err := os.MkdirAll(home, 0o755); err != nil {
			return nil, err
		}
		if os.Geteuid() == 0 { // the home is its user's, as in the provider's image
			if err := os.Chown(home, u.UID, u.GID); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(&passwd, "%s:x:%d:%d::%s:%s\n", u.Name, u.UID, u.GID, u.Home, shell)
		fmt.Fprintf(&group, "%s:x:%d:\n", u.Name, u.GID)
	}
	fmt.Fprintf(&passwd, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
	fmt.Fprintf(&group, "nogroup:x:65534:\n")
	if err := os.WriteFile(filepath.Join(cfg.Scratch, "passwd"), []byte(passwd.String()), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.Scratch, "group"), []byte(group.String()), 0o644); err != nil {
		return nil, err
	}
	if cfg.Mapped {
		if err := mountPoints(cfg.Root); err != nil {
			return nil, err
		}
	}
	for _, b := range cfg.Binds {
		if err := os.MkdirAll(filepath.Join(cfg.Root, filepath.Clean("/"+b.At)), 0o755); err != nil {
			return nil, err
		}
	}
	return &Space{cfg: cfg}, nil
}

// mountPoints makes, under root, an empty directory for each of this
// machine's system directories and mounts (or the same symbolic link,
// where this machine's is one: /bin -> usr/bin).
func mountPoints(root string) error {
	for _, d := range append(append([]string{}, systemDirs...), mounts...) {
		info, err := os.Lstat("/" + d)
		if err != nil {
			continue // this machine has none
		}
		at := filepath.Join(root, d)
		if _, err := os.Lstat(at); err == nil {
			continue
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink("/" + d)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, at); err != nil {
				return err
			}
			continue
		}
		if err := os.Mkdir(at, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Root is the directory of this machine that holds the sandbox's files.
func (s *Space) Root() string { return s.cfg.Root }

// Mapped reports whether the space's processes see the sandbox's paths.
func (s *Space) Mapped() bool { return s.cfg.Mapped }

// Path is the path through which this machine reaches the file that
// sandbox path p (absolute, or taken from /) names, as the sandbox's
// processes see it. In a mapped space it goes through the holder, which
// starts when needed; a system directory there is this machine's and
// read-only. A path cannot leave the sandbox by "..".
func (s *Space) Path(p string) (string, error) {
	clean := path.Clean("/" + p)
	if !s.cfg.Mapped {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.retired {
			return "", errRetired
		}
		return filepath.Join(s.cfg.Root, filepath.FromSlash(clean)), nil
	}
	h, err := s.running()
	if err != nil {
		return "", err
	}
	return h.root() + clean, nil
}

// Seen is sandbox path p as the sandbox's processes see it: p itself in a
// mapped space, else its directory under the root (for HOME and the like).
func (s *Space) Seen(p string) string {
	clean := path.Clean("/" + p)
	if s.cfg.Mapped {
		return clean
	}
	return filepath.Join(s.cfg.Root, filepath.FromSlash(clean))
}

// Resolve is sandbox path p with every symbolic link followed, as the
// sandbox's processes would follow them (an absolute target is the
// sandbox's); an error when a link is dangling or loops, or a part of p is
// missing (an lstat error naming the sandbox's path of that part).
func (s *Space) Resolve(p string) (string, error) {
	rest := strings.Split(p, "/")
	done := "/"
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			done = path.Dir(done)
			continue
		}
		next := path.Join(done, name)
		host, err := s.Path(next)
		if err != nil {
			return "", err
		}
		info, err := os.Lstat(host)
		if err != nil {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: errors.Unwrap(err)} // named as the sandbox sees it
		}
		if info.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > 40 {
			return "", &os.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return done, nil
}

// MkdirAll makes directory p (a sandbox path) and its missing parents
// with perm, each owned by u where the server may give files away (root).
func (s *Space) MkdirAll(p string, perm fs.FileMode, u User) error {
	clean := path.Clean("/" + p)
	if clean == "/" {
		return nil
	}
	host, err := s.Path(clean)
	if err != nil {
		return err
	}
	if info, err := os.Stat(host); err == nil {
		if !info.IsDir() {
			return &os.PathError{Op: "mkdir", Path: clean, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if err := s.MkdirAll(path.Dir(clean), perm, u); err != nil {
		return err
	}
	if err := os.Mkdir(host, perm); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return Chown(host, u)
}

// Chown gives the file at host (a path Path answered) to u where the
// server may (root); elsewhere files stay the server's user's.
func Chown(host string, u User) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return os.Lchown(host, u.UID, u.GID)
}

// LookPath finds the program a command named name runs, as a shell of
// the sandbox finds it: a name with a slash as it is (relative to cwd, a
// sandbox path), any other in the directories of pathList (a PATH). It
// answers the program as the sandbox's processes see it (Seen): an
// *exec.Error wrapping exec.ErrNotFound when there is none, a stat error
// for a name with a slash that is missing, fs.ErrPermission for one that
// is not an executable file.
func (s *Space) LookPath(name, pathList, cwd string) (string, error) {
	check := func(seen string) error {
		host := seen
		if s.cfg.Mapped {
			var err error
			if host, err = s.Path(seen); err != nil {
				return err
			}
		}
		info, err := os.Stat(host)
		if err != nil {
			return err
		}
		if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			return &fs.PathError{Op: "exec", Path: name, Err: fs.ErrPermission}
		}
		return nil
	}
	if strings.Contains(name, "/") {
		seen := name
		if !path.IsAbs(name) {
			seen = path.Join(s.Seen(cwd), name)
		}
		return seen, check(seen)
	}
	for _, dir := range filepath.SplitList(pathList) {
		if !path.IsAbs(dir) {
			continue
		}
		if seen := path.Join(dir, name); check(seen) == nil {
			return seen, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// Writable reports whether u may make entries in directory p (a sandbox
// path), as the kernel would decide for u: root may; another user by the
// directory's mode bits for its owner, its group or others. Where the
// server is not root, files are the server's own and every user may.
func (s *Space) Writable(p string, u User) bool {
	if u.UID == 0 || os.Geteuid() != 0 {
		return true
	}
	host, err := s.Path(p)
	if err != nil {
		return false
	}
	info, err := os.Stat(host)
	if err != nil {
		return false
	}
	uid, gid, ok := stubproc.Owner(info)
	perm := info.Mode().Perm()
	switch {
	case !ok:
		return true
	case uid == u.UID:
		return perm&0o200 != 0
	case gid == u.GID:
		return perm&0o020 != 0
	}
	return perm&0o002 != 0
}

// Owner is the user among users that owns the file info describes, where
// the server gives files their users (root).
func Owner(info fs.FileInfo, users []User) (User, bool) {
	uid, _, ok := stubproc.Owner(info)
	if !ok || os.Geteuid() != 0 {
		return User{}, false
	}
	for _, u := range users {
		if u.UID == uid {
			return u, true
		}
	}
	return User{}, false
}

// Command is `/bin/sh -c 'exec "$0" "$@"' name args...` in the space, as
// user, in cwd (a sandbox path), as the providers' daemons start commands:
// a missing program is a start, a message on stderr and exit 127, never a
// start failure; a cwd that is not a directory exits 1 (the servers check
// it first, as their daemons do). In a mapped space the command enters
// the sandbox's namespace and root, as the user when this machine lets the
// server change users (root); otherwise it runs as the server's user on
// this machine's paths, from the cwd's directory under the root.
func (s *Space) Command(cwd string, user User, name string, args ...string) (*exec.Cmd, error) {
	argv := append([]string{"/bin/sh", "-c", `cd -- "$0" || exit 1; exec "$@"`, "", name}, args...)
	if !s.cfg.Mapped {
		dir, err := s.Path(cwd)
		if err != nil {
			return nil, err
		}
		argv[3] = dir
	} else {
		h, err := s.running()
		if err != nil {
			return nil, err
		}
		argv[3] = path.Clean("/" + cwd)
		argv = h.enter(user, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.SysProcAttr = stubproc.GroupAttr()
	return cmd, nil
}

// running is the holder, started when there is none.
func (s *Space) running() (*holder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired {
		return nil, errRetired
	}
	if s.holder == nil || s.holder.ended() {
		h, err := startHolder(s.cfg)
		if err != nil {
			return nil, err
		}
		s.holder = h
	}
	return s.holder, nil
}

// Close ends the process holding the namespace; commands still in it keep
// it until they end. A later Command or Path makes a new one.
func (s *Space) Close() { s.end(false) }

// Retire is Close for a sandbox that is gone: a later Command or Path is
// refused, so a command still on its way cannot start a holder nobody
// ends.
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
