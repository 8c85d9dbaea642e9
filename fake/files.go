package fake

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	pathpkg "path"
	"sort"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
)

var _ paddock.FileManager = (*Adapter)(nil)

// WriteFile stores everything r yields at path, once r has ended; parents
// need no creating.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(path); err != nil {
		return err
	}
	src := paddock.NewWriteSource(r)
	data, err := io.ReadAll(src)
	if err != nil {
		return src.Failure(err)
	}
	if err := ctx.Err(); err != nil {
		return &paddock.UnavailableError{Detail: "write: " + err.Error()}
	}
	sb, err := a.lock(h)
	if err != nil {
		return err
	}
	defer a.mu.Unlock()
	if sb.isDir(path) {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": a directory is there"}
	}
	sb.makeParents(path, a.now())
	if _, existed := sb.files[path]; !existed {
		sb.notify(paddock.FileCreated, path)
	}
	sb.files[path] = file{data: data, mode: uint32(mode.Perm()), modTime: a.now()}
	sb.notify(paddock.FileWritten, path)
	return nil
}

// ReadFile streams a copy of the stored bytes; ErrNotFound for an absent
// sandbox or file.
func (a *Adapter) ReadFile(_ context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(path); err != nil {
		return nil, err
	}
	sb, err := a.lock(h)
	if err != nil {
		return nil, err
	}
	defer a.mu.Unlock()
	f, ok := sb.files[path]
	if !ok {
		return nil, paddock.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(bytes.Clone(f.data))), nil
}

// makeParents records every missing ancestor directory of p.
func (sb *sandbox) makeParents(p string, now time.Time) {
	var made []string
	for d := pathpkg.Dir(p); d != "/"; d = pathpkg.Dir(d) {
		if _, ok := sb.dirs[d]; !ok {
			sb.dirs[d] = dir{mode: 0o755, modTime: now}
			made = append(made, d)
		}
	}
	for i := len(made) - 1; i >= 0; i-- { // outermost first, as they would be made
		sb.notify(paddock.FileCreated, made[i])
	}
}

// isDir reports a directory at p.
func (sb *sandbox) isDir(p string) bool {
	_, ok := sb.dirs[p]
	return ok || p == "/"
}

// info describes the file or directory at p, or reports it absent.
func (sb *sandbox) info(p string) (paddock.FileInfo, bool) {
	fi := paddock.FileInfo{Name: pathpkg.Base(p), Path: p}
	if f, ok := sb.files[p]; ok {
		fi.Type, fi.Size, fi.Mode, fi.ModTime = paddock.FileRegular, int64(len(f.data)), fs.FileMode(f.mode), f.modTime
		return fi, true
	}
	if d, ok := sb.dirs[p]; ok {
		fi.Type, fi.Mode, fi.ModTime = paddock.FileDir, fs.FileMode(d.mode), d.modTime
		return fi, true
	}
	if p == "/" {
		fi.Name, fi.Type, fi.Mode = "/", paddock.FileDir, 0o755
		return fi, true
	}
	return paddock.FileInfo{}, false
}

// under lists the files and directories below directory p, at any depth.
func (sb *sandbox) under(p string) []string {
	prefix := strings.TrimSuffix(p, "/") + "/"
	var out []string
	for k := range sb.files {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	for k := range sb.dirs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// ListDir lists a directory's direct entries, sorted by name.
func (a *Adapter) ListDir(_ context.Context, h paddock.Handle, p string) ([]paddock.FileInfo, error) {
	sb, err := a.lock(h)
	if err != nil {
		return nil, err
	}
	defer a.mu.Unlock()
	if _, ok := sb.files[p]; ok {
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a directory"}
	}
	if !sb.isDir(p) {
		return nil, paddock.ErrNotFound
	}
	var children []string
	for _, k := range sb.under(p) {
		if pathpkg.Dir(k) == p {
			children = append(children, k)
		}
	}
	return paddock.Listing(children, func(k string) paddock.FileInfo { fi, _ := sb.info(k); return fi }), nil
}

// Stat describes one file or directory.
func (a *Adapter) Stat(_ context.Context, h paddock.Handle, p string) (paddock.FileInfo, error) {
	sb, err := a.lock(h)
	if err != nil {
		return paddock.FileInfo{}, err
	}
	defer a.mu.Unlock()
	fi, ok := sb.info(p)
	if !ok {
		return paddock.FileInfo{}, paddock.ErrNotFound
	}
	return fi, nil
}

// Remove removes a file, or a directory (with what it holds only when
// recursive).
func (a *Adapter) Remove(_ context.Context, h paddock.Handle, p string, opts paddock.RemoveOpts) error {
	sb, err := a.lock(h)
	if err != nil {
		return err
	}
	defer a.mu.Unlock()
	if _, ok := sb.files[p]; ok {
		delete(sb.files, p)
		sb.notify(paddock.FileRemoved, p)
		return nil
	}
	if !sb.isDir(p) {
		return paddock.ErrNotFound
	}
	inside := sb.under(p)
	if len(inside) > 0 && !opts.Recursive {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": the directory is not empty"}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(inside))) // the deepest first, as a recursive removal goes
	for _, k := range inside {
		delete(sb.files, k)
		delete(sb.dirs, k)
		sb.notify(paddock.FileRemoved, k)
	}
	delete(sb.dirs, p)
	sb.notify(paddock.FileRemoved, p)
	return nil
}

// Rename moves a file or directory (with what it holds), replacing a file
// at to.
func (a *Adapter) Rename(_ context.Context, h paddock.Handle, from, to string) error {
	sb, err := a.lock(h)
	if err != nil {
		return err
	}
	defer a.mu.Unlock()
	if _, ok := sb.info(from); !ok {
		return paddock.ErrNotFound
	}
	if !sb.isDir(pathpkg.Dir(to)) {
		return paddock.ErrNotFound
	}
	if sb.isDir(to) {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": a directory is there"}
	}
	if f, ok := sb.files[from]; ok {
		delete(sb.files, from)
		sb.files[to] = f
		sb.notify(paddock.FileRenamed, from)
		sb.notify(paddock.FileCreated, to)
		return nil
	}
	if _, ok := sb.files[to]; ok {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": a file is there"}
	}
	for _, k := range sb.under(from) {
		moved := to + strings.TrimPrefix(k, from)
		if f, ok := sb.files[k]; ok {
			delete(sb.files, k)
			sb.files[moved] = f
		} else {
			sb.dirs[moved] = sb.dirs[k]
			delete(sb.dirs, k)
		}
	}
	sb.dirs[to] = sb.dirs[from]
	delete(sb.dirs, from)
	sb.notify(paddock.FileRenamed, from)
	sb.notify(paddock.FileCreated, to)
	return nil
}

// MakeDir makes a directory (and its parents with Parents).
func (a *Adapter) MakeDir(_ context.Context, h paddock.Handle, p string, opts paddock.MakeDirOpts) error {
	sb, err := a.lock(h)
	if err != nil {
		return err
	}
	defer a.mu.Unlock()
	if _, ok := sb.info(p); ok {
		if opts.Parents && sb.isDir(p) {
			return nil
		}
		return paddock.ErrAlreadyExists
	}
	parent := pathpkg.Dir(p)
	if _, ok := sb.files[parent]; ok {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": a file is in the way"}
	}
	if !sb.isDir(parent) {
		if !opts.Parents {
			return paddock.ErrNotFound
		}
		for d := parent; d != "/"; d = pathpkg.Dir(d) {
			if _, ok := sb.files[d]; ok {
				return &paddock.InvalidError{Detail: paddock.DetailPath + ": a file is in the way"}
			}
		}
		sb.makeParents(p, a.now())
	}
	sb.dirs[p] = dir{mode: uint32(opts.Mode.Perm()), modTime: a.now()}
	sb.notify(paddock.FileCreated, p)
	return nil
}
