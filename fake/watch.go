package fake

import (
	"context"
	pathpkg "path"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/watchq"
)

// The fake's files change only through its own file operations, so a
// watch is fed by them, in the order they happen.

// Watch watches one directory's entries (docs/contract.md#op-watch).
func (a *Adapter) Watch(_ context.Context, h paddock.Handle, p string) (paddock.FileWatch, error) {
	sb, err := a.lock(h)
	if err != nil {
		return nil, err
	}
	defer a.mu.Unlock()
	info, ok := sb.info(p)
	switch {
	case !ok:
		return nil, paddock.ErrNotFound
	case info.Type != paddock.FileDir:
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a directory"}
	}
	if sb.watchers == nil {
		sb.watchers = map[*watchq.Queue]string{}
	}
	q := watchq.New()
	sb.watchers[q] = p
	return &watch{q: q, stop: func() {
		a.mu.Lock()
		delete(sb.watchers, q)
		a.mu.Unlock()
	}}, nil
}

// watch is a FileWatch on the fake.
type watch struct {
	q    *watchq.Queue
	stop func()
}

func (w *watch) Next(ctx context.Context) (paddock.FileEvent, error) { return w.q.Next(ctx) }
func (w *watch) Close() error {
	w.q.Close()
	w.stop()
	return nil
}

// notify reports a change of p to the watches of its directory; a watched
// directory that goes ends its watches. The caller holds the adapter's
// lock.
func (sb *sandbox) notify(change paddock.FileChange, p string) {
	for q, dir := range sb.watchers {
		switch {
		case pathpkg.Dir(p) == dir:
			q.Push(paddock.FileEvent{Change: change, Path: p})
		case (change == paddock.FileRemoved || change == paddock.FileRenamed) && (dir == p || len(dir) > len(p) && dir[:len(p)+1] == p+"/"):
			q.End(paddock.ErrNotFound) // the watched directory is gone
			delete(sb.watchers, q)
		}
	}
}

// endWatches ends every watch of the sandbox (it was destroyed).
func (sb *sandbox) endWatches() {
	for q := range sb.watchers {
		q.End(paddock.ErrNotFound)
	}
	sb.watchers = nil
}
