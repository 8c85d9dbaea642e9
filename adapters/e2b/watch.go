package e2b

import (
	"context"
	"path"
	"sync"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"
	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb/filesystempbconnect"
	"github.com/paddockhq/paddock/internal/watchq"
)

// Watch watches one directory's entries with envd's WatchDir
// (docs/contract.md#op-watch): it returns once envd's start event says the
// watch is in place. The stream's request has no deadline (Close ends it);
// chmod events are not reported; a stream that ends by itself means the
// directory is gone.
func (a *Adapter) Watch(ctx context.Context, h paddock.Handle, dir string) (paddock.FileWatch, error) {
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	client := filesystempbconnect.NewFilesystemClient(a.streaming, a.envdBase(id), connect.WithProtoJSON(),
		connect.WithReadMaxBytes(MaxEnvdMessage), connect.WithInterceptors(envdHeaders{sandbox: id, user: a.cfg.User}))
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel) // the caller gave up before the start
	defer stop()
	st, err := client.WatchDir(sctx, connect.NewRequest(&filesystempb.WatchDirRequest{Path: dir}))
	if err != nil {
		cancel()
		return nil, fileError(err)
	}
	for {
		if !st.Receive() {
			err := st.Err()
			_ = st.Close()
			cancel()
			if err == nil {
				return nil, &paddock.UnavailableError{Detail: "e2b: the watch ended before it started"}
			}
			if ctx.Err() != nil {
				return nil, &paddock.UnavailableError{Detail: paddock.DetailTimeout}
			}
			return nil, fileError(err)
		}
		if st.Msg().GetStart() != nil {
			break
		}
	}
	w := &watch{q: watchq.New(), cancel: cancel, dir: dir}
	w.read.Add(1)
	go w.run(st)
	return w, nil
}

// watch is one WatchDir stream and the goroutine reading it.
type watch struct {
	q      *watchq.Queue
	cancel context.CancelFunc
	dir    string
	read   sync.WaitGroup
}

func (w *watch) Next(ctx context.Context) (paddock.FileEvent, error) { return w.q.Next(ctx) }

// Close ends the stream and its reader.
func (w *watch) Close() error {
	w.q.Close()
	w.cancel()
	w.read.Wait()
	return nil
}

// run turns envd's events into changes until the stream ends.
func (w *watch) run(st *connect.ServerStreamForClient[filesystempb.WatchDirResponse]) {
	defer w.read.Done()
	defer st.Close()
	for st.Receive() {
		ev := st.Msg().GetFilesystem()
		if ev == nil {
			continue // a keepalive
		}
		var change paddock.FileChange
		switch ev.GetType() {
		case filesystempb.EventType_EVENT_TYPE_CREATE:
			change = paddock.FileCreated
		case filesystempb.EventType_EVENT_TYPE_WRITE:
			change = paddock.FileWritten
		case filesystempb.EventType_EVENT_TYPE_REMOVE:
			change = paddock.FileRemoved
		case filesystempb.EventType_EVENT_TYPE_RENAME:
			change = paddock.FileRenamed
		default:
			continue // chmod, and what the contract does not name
		}
		if !w.q.Push(paddock.FileEvent{Change: change, Path: path.Join(w.dir, ev.GetName())}) {
			w.cancel() // overflowed, or closed
			return
		}
	}
	if err := st.Err(); err != nil {
		w.q.End(envdError(err))
		return
	}
	w.q.End(paddock.ErrNotFound) // envd ends a watch whose directory went
}
