//go:build linux

package stubnotify

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/paddockhq/paddock/internal/inotify"
	"golang.org/x/sys/unix"
)

// Watch is an inotify watch of a directory (and, recursive, of the
// subdirectories it had at the start). Use Start; Close ends it.
type Watch struct {
	file   *os.File
	dirs   map[int32]string // watch descriptor -> path relative to the root
	events chan Change
	done   chan struct{}
	once   sync.Once
}

const mask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_EXCL_UNLINK

// Start watches dir, which may be a directory or a single file (then its
// changes are named ""); recursive also watches the subdirectories dir
// has now.
func Start(dir string, recursive bool) (*Watch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	n := &Watch{file: os.NewFile(uintptr(fd), "inotify"), dirs: map[int32]string{}, events: make(chan Change, 1024), done: make(chan struct{})}
	add := func(path, rel string) error {
		wd, err := unix.InotifyAddWatch(fd, path, mask)
		if err == nil {
			n.dirs[int32(wd)] = rel
		}
		return err
	}
	if err := add(dir, ""); err != nil {
		_ = n.file.Close()
		return nil, err
	}
	if recursive {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != dir {
				rel, _ := filepath.Rel(dir, p)
				_ = add(p, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	go n.read()
	return n, nil
}

// Events are the changes in the order the kernel saw them; closed once
// the watch ended (Close, or the watched root gone).
func (n *Watch) Events() <-chan Change { return n.events }

// Done is closed by Close.
func (n *Watch) Done() <-chan struct{} { return n.done }

// Close ends the watch; Events closes once its reader is done.
func (n *Watch) Close() { n.once.Do(func() { close(n.done); _ = n.file.Close() }) }

func (n *Watch) read() {
	defer close(n.events)
	buf := make([]byte, 64<<10)
	for {
		k, err := n.file.Read(buf)
		if err != nil {
			return
		}
		more := inotify.Records(buf[:k], func(r inotify.Record) bool {
			if r.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 && n.dirs[r.Wd] == "" {
				// The watched root is gone: said (as fsnotify does), then the end.
				kind := Remove
				if r.Mask&unix.IN_MOVE_SELF != 0 {
					kind = Rename
				}
				select {
				case n.events <- Change{Kind: kind}:
				case <-n.done:
				}
				return false
			}
			kind, ok := kindOf(r.Mask)
			if !ok {
				return true
			}
			rel := string(r.Name)
			if parent := n.dirs[r.Wd]; parent != "" {
				rel = parent + "/" + rel
			}
			if len(r.Name) == 0 && n.dirs[r.Wd] != "" {
				return true // a subdirectory's own change: its parent reports it
			}
			select {
			case n.events <- Change{Name: rel, Kind: kind}:
				return true
			case <-n.done:
				return false
			}
		})
		if !more {
			return
		}
	}
}

// kindOf names an inotify record as fsnotify does.
func kindOf(m uint32) (Kind, bool) {
	switch {
	case m&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		return Create, true
	case m&unix.IN_MODIFY != 0:
		return Write, true
	case m&unix.IN_DELETE != 0:
		return Remove, true
	case m&unix.IN_MOVED_FROM != 0:
		return Rename, true
	case m&unix.IN_ATTRIB != 0:
		return Chmod, true
	}
	return 0, false
}
