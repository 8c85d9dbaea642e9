package e2btest

import (
	"context"
	"errors"
	"fmt"
	"github.com/paddockhq/paddock/adapters/internal/stubnotify"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fsService is envd's Filesystem service for every sandbox; the sandbox
// comes with the request's context. Relative paths are the user's home.
type fsService struct{ s *Server }

// entry describes the file at abs (a sandbox path), as envd does.
func (sb *sandbox) entry(abs string) (*filesystempb.EntryInfo, error) {
	target, err := sb.space.Path(abs)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	info, err := os.Lstat(target)
	if err != nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("file not found: lstat %s: no such file or directory", abs))
	}
	permissions := info.Mode().String()
	e := &filesystempb.EntryInfo{Name: path.Base(abs), Path: abs, Permissions: permissions, Owner: "user", Group: "user"}
	if info.Mode()&fs.ModeSymlink != 0 {
		// envd describes a link by what it leads to (type, mode, size),
		// with the link's own permissions string (starting "L") and the
		// resolved target; a dangling link stays a link.
		if resolved, err := sb.space.Resolve(abs); err == nil {
			if host, err := sb.space.Path(resolved); err == nil {
				if to, err := os.Stat(host); err == nil {
					e.SymlinkTarget, info = &resolved, to
				}
			}
		}
	}
	e.Size, e.Mode, e.ModifiedTime = info.Size(), uint32(info.Mode().Perm()), timestamppb.New(info.ModTime())
	e.Metadata = readMetadata(target)
	if u, ok := stubfs.Owner(info, users); ok {
		e.Owner, e.Group = u.Name, u.Name
	}
	sb.s.mu.Lock()
	if o := sb.owners[abs]; o != "" {
		e.Owner, e.Group = o, o
	}
	sb.s.mu.Unlock()
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		e.Type = filesystempb.FileType_FILE_TYPE_SYMLINK
		if dest, err := os.Readlink(target); err == nil {
			e.SymlinkTarget = &dest
		}
	case info.IsDir():
		e.Type = filesystempb.FileType_FILE_TYPE_DIRECTORY
	default:
		e.Type = filesystempb.FileType_FILE_TYPE_FILE
	}
	return e, nil
}

// host is where this machine reaches sandbox path abs, as an RPC's error.
func (sb *sandbox) host(abs string) (string, error) {
	p, err := sb.space.Path(abs)
	if err != nil {
		return "", connect.NewError(connect.CodeInternal, err)
	}
	return p, nil
}

func (f fsService) Stat(ctx context.Context, req *connect.Request[filesystempb.StatRequest]) (*connect.Response[filesystempb.StatResponse], error) {
	sb := sandboxOf(ctx)
	e, err := sb.entry(sb.inside(req.Msg.GetPath(), userOf(req.Header())))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystempb.StatResponse{Entry: e}), nil
}

// MakeDir creates a directory and its parents: an existing directory is
// already_exists, an existing file invalid_argument.
func (f fsService) MakeDir(ctx context.Context, req *connect.Request[filesystempb.MakeDirRequest]) (*connect.Response[filesystempb.MakeDirResponse], error) {
	sb := sandboxOf(ctx)
	user := userOf(req.Header())
	abs := sb.inside(req.Msg.GetPath(), user)
	host, err := sb.host(abs)
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(host); err == nil {
		if info.IsDir() {
			return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("directory already exists: %s", abs))
		}
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("path already exists but it is not a directory: %s", abs))
	}
	if err := sb.space.MkdirAll(abs, 0o755, user); err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error making directory: %w", err))
	}
	e, err := sb.entry(abs)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystempb.MakeDirResponse{Entry: e}), nil
}

func (f fsService) Move(ctx context.Context, req *connect.Request[filesystempb.MoveRequest]) (*connect.Response[filesystempb.MoveResponse], error) {
	sb := sandboxOf(ctx)
	user := userOf(req.Header())
	src, dst := sb.inside(req.Msg.GetSource(), user), sb.inside(req.Msg.GetDestination(), user)
	from, err := sb.host(src)
	if err != nil {
		return nil, err
	}
	to, err := sb.host(dst)
	if err != nil {
		return nil, err
	}
	if err := sb.space.MkdirAll(path.Dir(dst), 0o755, user); err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	if _, err := os.Lstat(from); err != nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("source file not found: rename %s %s: no such file or directory", src, dst))
	}
	if err := os.Rename(from, to); err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error renaming: %w", err))
	}
	sb.s.mu.Lock() // a rename keeps the file, owner and all
	if o, ok := sb.owners[src]; ok {
		sb.owners[dst] = o
		delete(sb.owners, src)
	} else {
		delete(sb.owners, dst)
	}
	sb.s.mu.Unlock()
	e, err := sb.entry(dst)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystempb.MoveResponse{Entry: e}), nil
}

// ListDir lists a directory to depth levels (0 counts as 1).
func (f fsService) ListDir(ctx context.Context, req *connect.Request[filesystempb.ListDirRequest]) (*connect.Response[filesystempb.ListDirResponse], error) {
	sb := sandboxOf(ctx)
	root := sb.inside(req.Msg.GetPath(), userOf(req.Header()))
	resolved, err := sb.space.Resolve(root) // as envd's EvalSymlinks
	if errors.Is(err, fs.ErrNotExist) {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("path not found: %w", err))
	}
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error resolving symlink: %w", err))
	}
	host, err := sb.host(resolved)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(host)
	if err != nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("directory not found: stat %s: no such file or directory", resolved))
	}
	if !info.IsDir() {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("path is not a directory: %s", resolved))
	}
	depth := int(max(req.Msg.GetDepth(), 1))
	out := &filesystempb.ListDirResponse{}
	var walk func(dir string, level int)
	walk = func(dir string, level int) {
		host, err := sb.host(dir)
		if err != nil {
			return
		}
		names, _ := os.ReadDir(host)
		for _, d := range names {
			abs := strings.TrimSuffix(dir, "/") + "/" + d.Name()
			if e, err := sb.entry(abs); err == nil {
				out.Entries = append(out.Entries, e)
			}
			if d.IsDir() && level < depth {
				walk(abs, level+1)
			}
		}
	}
	walk(resolved, 1) // entries under the resolved path, as envd walks it
	return connect.NewResponse(out), nil
}

// Remove removes recursively; an absent path is fine.
func (f fsService) Remove(ctx context.Context, req *connect.Request[filesystempb.RemoveRequest]) (*connect.Response[filesystempb.RemoveResponse], error) {
	sb := sandboxOf(ctx)
	host, err := sb.host(sb.inside(req.Msg.GetPath(), userOf(req.Header())))
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(host); err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error removing: %w", err))
	}
	return connect.NewResponse(&filesystempb.RemoveResponse{}), nil
}

// watchPoll is how often a watch looks at its directory again.
const watchPoll = 50 * time.Millisecond

// snapshot is what a watch last saw: each path (relative to the watched
// directory) with its size and modification time.
type snapshot map[string]fileState

type fileState struct {
	size int64
	mod  time.Time
	mode fs.FileMode
}

// look takes a snapshot of dir, its subdirectories too when recursive.
func look(dir string, recursive bool) snapshot {
	snap := snapshot{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		info, err := d.Info()
		if err == nil {
			rel, _ := filepath.Rel(dir, p)
			snap[rel] = fileState{size: info.Size(), mod: info.ModTime(), mode: info.Mode()}
		}
		if d.IsDir() && !recursive {
			return filepath.SkipDir
		}
		return nil
	})
	return snap
}

// changes are the events between two snapshots, in name order: new paths
// are CREATE, gone ones REMOVE, changed contents WRITE, changed modes
// CHMOD.
func changes(sb *sandbox, root string, before, after snapshot, withEntry bool) []*filesystempb.FilesystemEvent {
	var out []*filesystempb.FilesystemEvent
	add := func(name string, t filesystempb.EventType) {
		ev := &filesystempb.FilesystemEvent{Name: name, Type: t}
		if withEntry && t != filesystempb.EventType_EVENT_TYPE_REMOVE {
			ev.Entry, _ = sb.entry(strings.TrimSuffix(root, "/") + "/" + filepath.ToSlash(name))
		}
		out = append(out, ev)
	}
	names := make([]string, 0, len(before)+len(after))
	for n := range before {
		names = append(names, n)
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		was, had := before[n]
		now, has := after[n]
		switch {
		case !had:
			add(n, filesystempb.EventType_EVENT_TYPE_CREATE)
		case !has:
			add(n, filesystempb.EventType_EVENT_TYPE_REMOVE)
		case was.mode != now.mode:
			add(n, filesystempb.EventType_EVENT_TYPE_CHMOD)
		case was.size != now.size || !was.mod.Equal(now.mod):
			add(n, filesystempb.EventType_EVENT_TYPE_WRITE)
		}
	}
	return out
}

// watchRoot checks a watch's directory: it must exist and be one. It
// answers the sandbox path and where this machine reaches it.
func watchRoot(sb *sandbox, p string, user stubfs.User) (abs, host string, err error) {
	abs = sb.inside(p, user)
	if host, err = sb.host(abs); err != nil {
		return "", "", err
	}
	info, err := os.Stat(host)
	if err != nil {
		return "", "", connect.NewError(connect.CodeNotFound, fmt.Errorf("path %s not found", abs))
	}
	if !info.IsDir() {
		return "", "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("path %s not a directory", abs))
	}
	return abs, host, nil
}

// WatchDir streams changes under a directory as envd does (fsnotify, so
// inotify): start first, once the watch is in place, then each change in
// the order the kernel saw it (a rename for the old name, a create for the
// new one; chmod too), keepalives while quiet, until the client leaves. A
// recursive watch also watches the subdirectories there at its start. The
// directory's own removal ends the stream.
func (f fsService) WatchDir(ctx context.Context, req *connect.Request[filesystempb.WatchDirRequest], stream *connect.ServerStream[filesystempb.WatchDirResponse]) error {
	sb := sandboxOf(ctx)
	root, host, err := watchRoot(sb, req.Msg.GetPath(), userOf(req.Header()))
	if err != nil {
		return err
	}
	n, err := stubnotify.Start(host, req.Msg.GetRecursive())
	if err != nil {
		return connect.NewError(connect.CodeInternal, err)
	}
	defer n.Close()
	if err := stream.Send(&filesystempb.WatchDirResponse{Event: &filesystempb.WatchDirResponse_Start{Start: &filesystempb.WatchDirResponse_StartEvent{}}}); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, n.Close)
	defer stop()
	go func() {
		select {
		case <-f.s.Closing():
			n.Close()
		case <-n.Done():
		}
	}()
	keepalive := time.NewTimer(50 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case ev, ok := <-n.Events():
			if !ok {
				return nil
			}
			if ev.Name == "" {
				continue // the watched directory's own attributes: envd reports changes in it
			}
			out := &filesystempb.FilesystemEvent{Name: ev.Name, Type: eventTypes[ev.Kind]}
			if req.Msg.GetIncludeEntry() && ev.Kind != stubnotify.Remove && ev.Kind != stubnotify.Rename {
				out.Entry, _ = sb.entry(strings.TrimSuffix(root, "/") + "/" + ev.Name)
			}
			if err := stream.Send(&filesystempb.WatchDirResponse{Event: &filesystempb.WatchDirResponse_Filesystem{Filesystem: out}}); err != nil {
				return err
			}
			keepalive.Reset(50 * time.Second)
		case <-keepalive.C:
			if err := stream.Send(&filesystempb.WatchDirResponse{Event: &filesystempb.WatchDirResponse_Keepalive{Keepalive: &filesystempb.WatchDirResponse_KeepAlive{}}}); err != nil {
				return err
			}
			keepalive.Reset(50 * time.Second)
		}
	}
}

// eventTypes are envd's names of fsnotify's kinds.
var eventTypes = map[stubnotify.Kind]filesystempb.EventType{
	stubnotify.Create: filesystempb.EventType_EVENT_TYPE_CREATE,
	stubnotify.Write:  filesystempb.EventType_EVENT_TYPE_WRITE,
	stubnotify.Remove: filesystempb.EventType_EVENT_TYPE_REMOVE,
	stubnotify.Rename: filesystempb.EventType_EVENT_TYPE_RENAME,
	stubnotify.Chmod:  filesystempb.EventType_EVENT_TYPE_CHMOD,
}

// watcher is a polling watch: the snapshot it compares against.
type watcher struct {
	sb        *sandbox
	root, dir string
	recursive bool
	entry     bool
	seen      snapshot
}

// watchers are the server's polling watches by id.
type watchers struct {
	mu   sync.Mutex
	byID map[string]*watcher
}

func (f fsService) CreateWatcher(ctx context.Context, req *connect.Request[filesystempb.CreateWatcherRequest]) (*connect.Response[filesystempb.CreateWatcherResponse], error) {
	sb := sandboxOf(ctx)
	root, host, err := watchRoot(sb, req.Msg.GetPath(), userOf(req.Header()))
	if err != nil {
		return nil, err
	}
	w := &watcher{sb: sb, root: root, dir: host, recursive: req.Msg.GetRecursive(), entry: req.Msg.GetIncludeEntry()}
	w.seen = look(w.dir, w.recursive)
	id := randomID(16)
	f.s.watches.mu.Lock()
	f.s.watches.byID[id] = w
	f.s.watches.mu.Unlock()
	return connect.NewResponse(&filesystempb.CreateWatcherResponse{WatcherId: id}), nil
}

// GetWatcherEvents hands out what changed since the last call.
func (f fsService) GetWatcherEvents(_ context.Context, req *connect.Request[filesystempb.GetWatcherEventsRequest]) (*connect.Response[filesystempb.GetWatcherEventsResponse], error) {
	f.s.watches.mu.Lock()
	defer f.s.watches.mu.Unlock()
	w := f.s.watches.byID[req.Msg.GetWatcherId()]
	if w == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("watcher with id %s not found", req.Msg.GetWatcherId()))
	}
	now := look(w.dir, w.recursive)
	events := changes(w.sb, w.root, w.seen, now, w.entry)
	w.seen = now
	return connect.NewResponse(&filesystempb.GetWatcherEventsResponse{Events: events}), nil
}

func (f fsService) RemoveWatcher(_ context.Context, req *connect.Request[filesystempb.RemoveWatcherRequest]) (*connect.Response[filesystempb.RemoveWatcherResponse], error) {
	f.s.watches.mu.Lock()
	defer f.s.watches.mu.Unlock()
	if f.s.watches.byID[req.Msg.GetWatcherId()] == nil {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("watcher not found"))
	}
	delete(f.s.watches.byID, req.Msg.GetWatcherId())
	return connect.NewResponse(&filesystempb.RemoveWatcherResponse{}), nil
}
