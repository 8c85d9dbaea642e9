package paddock

import (
	"context"
	"errors"
	"io"
)

// FileChange is what happened to a file of a watched directory
// (docs/contract.md#op-watch).
type FileChange string

// The changes a watch reports. A rename is reported for the old path; the
// new path, when it is in the watched directory, follows as a create.
const (
	FileCreated FileChange = "create"
	FileWritten FileChange = "write"
	FileRemoved FileChange = "remove"
	FileRenamed FileChange = "rename"
)

// Known reports whether c is one of the four changes.
func (c FileChange) Known() bool {
	switch c {
	case FileCreated, FileWritten, FileRemoved, FileRenamed:
		return true
	}
	return false
}

// FileEvent is one change of an entry of a watched directory: its
// absolute path inside the sandbox and what happened to it.
type FileEvent struct {
	Change FileChange `json:"change"`
	Path   string     `json:"path"`
}

// FileWatch is a live watch of one directory, as an adapter returns it.
// Next yields the changes in the order they happened, consecutive writes
// to one file as one; an error ends the watch (its directory removed, or
// unavailable(watch_overflow) when more changes came than
// MaxWatchBacklog while nobody read them); after Close it answers io.EOF.
// Next is called from one goroutine at a time; Close may be called
// concurrently with it.
type FileWatch interface {
	Next(ctx context.Context) (FileEvent, error)
	Close() error
}

// MaxWatchBacklog bounds the changes a watch holds for a reader that does
// not keep up; past it the watch ends with unavailable(watch_overflow).
const MaxWatchBacklog = 4096

// DirWatcher is implemented by adapters offering CapWatch. The path
// arrives validated and cleaned.
type DirWatcher interface {
	// Watch starts watching the entries of one directory (not its
	// subdirectories' entries) and returns once the watch is in place:
	// every change after it returns is reported. not_found when the
	// directory is absent, invalid when it is not a directory.
	Watch(ctx context.Context, h Handle, path string) (FileWatch, error)
}

// Watch validates the path and starts a's watch when a advertises
// CapWatch; otherwise ErrNotSupported.
func Watch(ctx context.Context, a Adapter, h Handle, p string) (FileWatch, error) {
	p, err := CleanPath(p)
	if err != nil {
		return nil, err
	}
	w, ok := a.(DirWatcher)
	if !ok || !Supports(a, CapWatch) {
		return nil, ErrNotSupported
	}
	fw, err := w.Watch(ctx, h, p)
	if err != nil {
		return nil, err
	}
	return &stagedWatch{w: fw}, nil
}

// stagedWatch shows a staged write (a StagingPath file renamed over its
// path, how adapters make WriteFile all or nothing) as the write of its
// path: the staging file's own changes are not reported, and the create
// its rename makes is followed by a write. A watch is of one directory,
// so the create that follows a staging file's rename is its path's.
type stagedWatch struct {
	w     FileWatch
	moved bool       // a staging file was just renamed
	next  *FileEvent // the write to report after its create
}

func (s *stagedWatch) Next(ctx context.Context) (FileEvent, error) {
	if s.next != nil {
		ev := *s.next
		s.next = nil
		return ev, nil
	}
	for {
		ev, err := s.w.Next(ctx)
		switch {
		case err != nil:
			return ev, err
		case IsStagingPath(ev.Path):
			s.moved = ev.Change == FileRenamed
			continue
		case ev.Change == FileCreated && s.moved:
			s.next = &FileEvent{Change: FileWritten, Path: ev.Path}
		}
		s.moved = false
		return ev, nil
	}
}

func (s *stagedWatch) Close() error { return s.w.Close() }

// WatchStream presents a watch as a command stream (how the runtime
// carries it): each change is an EventFile event, an error ending the
// watch its terminal EventError; it takes no input.
func WatchStream(w FileWatch) Stream { return watchStream{w} }

type watchStream struct{ w FileWatch }

func (s watchStream) Next(ctx context.Context) (Event, error) {
	ev, err := s.w.Next(ctx)
	switch {
	case err == nil:
		return Event{Kind: EventFile, File: ev}, nil
	case errors.Is(err, io.EOF), ctx.Err() != nil:
		return Event{}, err
	}
	return Failed(err), nil
}

func (s watchStream) WriteStdin(context.Context, []byte) error {
	return &InvalidError{Detail: "a watch takes no input"}
}
func (s watchStream) CloseStdin(context.Context) error { return nil }
func (s watchStream) Close() error                     { return s.w.Close() }
func (s watchStream) SessionID() string                { return "" }

// WatchOf presents a stream of EventFile events (a watch the runtime
// carries) as a FileWatch: its terminal error ends the watch; an exit,
// which no watch has, is unavailable.
func WatchOf(st Stream) FileWatch { return &streamWatch{st: st} }

type streamWatch struct {
	st  Stream
	end error // after the terminal event
}

func (w *streamWatch) Next(ctx context.Context) (FileEvent, error) {
	if w.end != nil {
		return FileEvent{}, w.end
	}
	for {
		ev, err := w.st.Next(ctx)
		if err != nil {
			return FileEvent{}, err
		}
		switch ev.Kind {
		case EventFile:
			return ev.File, nil
		case EventError:
			w.end = ev.Err
			return FileEvent{}, ev.Err
		case EventExit:
			w.end = &UnavailableError{Detail: "a watch ended with an exit"}
			return FileEvent{}, w.end
		}
	}
}

func (w *streamWatch) Close() error { return w.st.Close() }
