//go:build linux

package e2btest

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"
	"github.com/paddockhq/paddock/internal/inotify"
	"golang.org/x/sys/unix"
)

// notifier is an inotify watch of a directory (and, recursive, of the
// subdirectories it had at the start), its changes as envd names them.
type notifier struct {
	file   *os.File
	dirs   map[int32]string // watch descriptor -> path relative to the root
	events chan change
	done   chan struct{}
	once   sync.Once
}

const notifyMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

func newNotifier(dir string, recursive bool) (*notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	n := &notifier{file: os.NewFile(uintptr(fd), "inotify"), dirs: map[int32]string{}, events: make(chan change, 1024), done: make(chan struct{})}
	add := func(path, rel string) error {
		wd, err := unix.InotifyAddWatch(fd, path, notifyMask)
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

// close ends the watch; events closes once the reader is done.
func (n *notifier) close() { n.once.Do(func() { close(n.done); _ = n.file.Close() }) }

func (n *notifier) read() {
	defer close(n.events)
	buf := make([]byte, 64<<10)
	for {
		k, err := n.file.Read(buf)
		if err != nil {
			return
		}
		more := inotify.Records(buf[:k], func(r inotify.Record) bool {
			if r.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 && n.dirs[r.Wd] == "" {
				return false // the watched directory is gone
			}
			kind, ok := changeKind(r.Mask)
			if !ok || len(r.Name) == 0 {
				return true
			}
			rel := string(r.Name)
			if parent := n.dirs[r.Wd]; parent != "" {
				rel = parent + "/" + rel
			}
			select {
			case n.events <- change{name: rel, kind: kind}:
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

// changeKind names an inotify record as fsnotify (and so envd) does.
func changeKind(mask uint32) (filesystempb.EventType, bool) {
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		return filesystempb.EventType_EVENT_TYPE_CREATE, true
	case mask&unix.IN_MODIFY != 0:
		return filesystempb.EventType_EVENT_TYPE_WRITE, true
	case mask&unix.IN_DELETE != 0:
		return filesystempb.EventType_EVENT_TYPE_REMOVE, true
	case mask&unix.IN_MOVED_FROM != 0:
		return filesystempb.EventType_EVENT_TYPE_RENAME, true
	case mask&unix.IN_ATTRIB != 0:
		return filesystempb.EventType_EVENT_TYPE_CHMOD, true
	}
	return 0, false
}
