package local

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"sync"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/inotify"
	"github.com/paddockhq/paddock/internal/watchq"
	"golang.org/x/sys/unix"
)

// watchSupported: Linux watches directories with inotify.
const watchSupported = true

// watchMask is what a watch asks inotify for: its entries' creation,
// writes, removal and moves, and the directory's own end.
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// Watch watches one directory's entries with inotify
// (docs/contract.md#op-watch). The directory is opened inside the
// sandbox's root first, and the watch is put on that open directory, so
// a link leading out is never followed.
func (a *Adapter) Watch(_ context.Context, h paddock.Handle, p string) (paddock.FileWatch, error) {
	dir, _, root, err := a.openAs(h.Name, p, true)
	if err != nil {
		return nil, err
	}
	root.Close()
	defer dir.Close()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, unavailable("watch", err)
	}
	if _, err := unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(int(dir.Fd())), watchMask); err != nil {
		_ = unix.Close(fd)
		return nil, unavailable("watch", err)
	}
	w := &dirWatch{q: watchq.New(), events: os.NewFile(uintptr(fd), "inotify"), dir: p}
	w.read.Add(1)
	go w.run()
	return w, nil
}

// dirWatch is one inotify watch and the goroutine reading it.
type dirWatch struct {
	q      *watchq.Queue
	events *os.File // the inotify descriptor, non-blocking: Close ends a Read
	dir    string
	read   sync.WaitGroup
	once   sync.Once
}

func (w *dirWatch) Next(ctx context.Context) (paddock.FileEvent, error) { return w.q.Next(ctx) }

// Close ends the watch and its reader.
func (w *dirWatch) Close() error {
	w.q.Close()
	w.once.Do(func() { _ = w.events.Close() })
	w.read.Wait()
	return nil
}

// run turns inotify's records into changes until the watch ends.
func (w *dirWatch) run() {
	defer w.read.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := w.events.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.EOF) {
				w.q.End(unavailable("watch", err))
			}
			return
		}
		more := inotify.Records(buf[:n], func(r inotify.Record) bool { return w.handle(r.Mask, string(r.Name)) })
		if !more {
			w.once.Do(func() { _ = w.events.Close() })
			return
		}
	}
}

// handle reports one record; false once the watch has ended.
func (w *dirWatch) handle(mask uint32, name string) bool {
	var change paddock.FileChange
	switch {
	case mask&unix.IN_Q_OVERFLOW != 0:
		w.q.End(paddock.ErrWatchOverflow)
		return false
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
		w.q.End(paddock.ErrNotFound) // the directory is gone (or moved away)
		return false
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		change = paddock.FileCreated
	case mask&unix.IN_MODIFY != 0:
		change = paddock.FileWritten
	case mask&unix.IN_DELETE != 0:
		change = paddock.FileRemoved
	case mask&unix.IN_MOVED_FROM != 0:
		change = paddock.FileRenamed
	default:
		return true
	}
	return w.q.Push(paddock.FileEvent{Change: change, Path: path.Join(w.dir, name)})
}
