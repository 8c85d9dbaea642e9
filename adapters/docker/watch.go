package docker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"strconv"
	"sync"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/watchq"
)

// Watch watches one directory's entries (docs/contract.md#op-watch) by
// running paddock-watch (inotify) inside the sandbox, as the sandbox user,
// on an exec whose stdin ends it. It returns once the helper says its
// watch is in place.
func (a *Adapter) Watch(ctx context.Context, h paddock.Handle, dir string) (paddock.FileWatch, error) {
	if !a.cfg.Helpers {
		return nil, paddock.ErrNotSupported
	}
	x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptWatch, dir), stdin: true})
	if err != nil {
		return nil, err
	}
	w := &watch{a: a, sandbox: h.Name, x: x, dir: dir, q: watchq.New(), buf: make([]byte, 32<<10)}
	stop := context.AfterFunc(ctx, x.close)
	ready, err := w.awaitReady()
	stopped := stop()
	switch {
	case !stopped:
		x.close()
		return nil, ctxError(ctx)
	case err != nil:
		x.close()
		return nil, err
	case !ready:
		x.close()
		return nil, w.startFailure()
	}
	w.read.Add(1)
	go w.run()
	return w, nil
}

// watch is one paddock-watch exec and the goroutine reading it.
type watch struct {
	a       *Adapter
	sandbox string
	x       *attached
	dir     string
	q       *watchq.Queue
	read    sync.WaitGroup
	once    sync.Once

	buf     []byte
	pending []byte // bytes of records not yet whole
	stderr  bytes.Buffer
}

func (w *watch) Next(ctx context.Context) (paddock.FileEvent, error) { return w.q.Next(ctx) }

// Close ends the watch: the helper's stdin closes, and so does the exec.
func (w *watch) Close() error {
	w.q.Close()
	w.once.Do(func() {
		_ = w.x.closeWrite()
		w.x.close()
	})
	w.read.Wait()
	return nil
}

// fill reads one chunk of the exec's output into pending (stderr aside).
func (w *watch) fill() error {
	stream, data, err := w.x.next(w.buf)
	switch stream {
	case muxStdout:
		w.pending = append(w.pending, data...)
	case muxStderr, muxSystem:
		if w.stderr.Len() < 1024 {
			w.stderr.Write(data)
		}
	}
	return err
}

// awaitReady reads up to the helper's "ready" line; false when the exec
// ended first.
func (w *watch) awaitReady() (bool, error) {
	for {
		if i := bytes.IndexByte(w.pending, '\n'); i >= 0 {
			if string(w.pending[:i]) != "ready" {
				return false, &paddock.ProviderError{Provider: paddock.ProviderDocker, Detail: "paddock-watch said " + short(string(w.pending[:i]))}
			}
			w.pending = w.pending[i+1:]
			return true, nil
		}
		if err := w.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, &paddock.UnavailableError{Detail: "docker: starting the watch: " + short(err.Error())}
		}
	}
}

// startFailure is why the helper ended before its watch was in place.
func (w *watch) startFailure() error {
	code, err := w.a.finished(w.sandbox, w.x.id)
	switch {
	case err != nil:
		return err
	case code == 3:
		return paddock.ErrNotFound
	case code == 4:
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": not a directory"}
	case code == 5:
		return &paddock.UnavailableError{Detail: "docker: the image has no paddock-watch (Config.Helpers says it does)"}
	}
	return &paddock.InvalidError{Detail: paddock.DetailPath + ": " + short(w.stderr.String())}
}

// run turns the helper's records into changes until the watch ends.
func (w *watch) run() {
	defer w.read.Done()
	for {
		for {
			ev, ok, bad := w.record()
			if bad {
				w.q.End(&paddock.ProviderError{Provider: paddock.ProviderDocker, Detail: "a malformed paddock-watch record"})
				w.x.close()
				return
			}
			if !ok {
				break
			}
			if !w.q.Push(ev) {
				w.x.close() // ended (overflow) or closed
				return
			}
		}
		if err := w.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				w.ended()
			} else {
				w.q.End(&paddock.UnavailableError{Detail: "docker: the watch's stream broke"})
			}
			return
		}
	}
}

// record takes one whole record from pending: "L N\n" then N bytes of
// name. ok is false until one is whole; bad for a record of no such shape.
func (w *watch) record() (ev paddock.FileEvent, ok, bad bool) {
	i := bytes.IndexByte(w.pending, '\n')
	if i < 0 {
		return ev, false, len(w.pending) > 32
	}
	head := w.pending[:i]
	if len(head) < 3 || head[1] != ' ' {
		return ev, false, true
	}
	n, err := strconv.Atoi(string(head[2:]))
	if err != nil || n <= 0 || n > maxNameBytes {
		return ev, false, true
	}
	if len(w.pending) < i+1+n {
		return ev, false, false
	}
	name := string(w.pending[i+1 : i+1+n])
	w.pending = w.pending[i+1+n:]
	switch head[0] {
	case 'c':
		ev.Change = paddock.FileCreated
	case 'w':
		ev.Change = paddock.FileWritten
	case 'd':
		ev.Change = paddock.FileRemoved
	case 'r':
		ev.Change = paddock.FileRenamed
	default:
		return ev, false, true
	}
	ev.Path = path.Join(w.dir, name)
	return ev, true, false
}

// ended reports how the helper ended on its own: its directory gone, the
// kernel's queue overflowed, or a failure.
func (w *watch) ended() {
	code, err := w.a.finished(w.sandbox, w.x.id)
	switch {
	case err != nil:
		w.q.End(err)
	case code == 3:
		w.q.End(paddock.ErrNotFound)
	case code == 4:
		w.q.End(paddock.ErrWatchOverflow)
	case code == 0:
		w.q.End(&paddock.UnavailableError{Detail: "docker: the watch ended"})
	default:
		w.q.End(&paddock.UnavailableError{Detail: "docker: the watch failed: " + short(w.stderr.String())})
	}
}
