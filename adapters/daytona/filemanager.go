package daytona

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/paddockhq/paddock"
)

// The file operations (docs/contract.md#op-file-operations) use the toolbox's file
// routes. Where the daemon differs from the contract the adapter checks
// first (two or three calls, not atomic): its delete refuses any
// directory without recursive, empty ones too, so an empty directory is
// listed and then deleted recursively; its move refuses an existing
// destination (409), so a file there is deleted first; its folder route
// makes parents under its umask, so the parent is looked at first and
// the mode set after. The daemon describes a link by what it leads to:
// links are never reported as such.

var _ paddock.FileManager = (*Adapter)(nil)

// fileInfo is the daemon's description of one file.
type fileInfo struct {
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	Mode        string `json:"mode"`
	ModTime     string `json:"modTime"`
	ModifiedAt  string `json:"modifiedAt"`
	IsDir       bool   `json:"isDir"`
	Permissions string `json:"permissions"`
}

// info converts a description of a file found in dir.
func (f fileInfo) info(dir string) paddock.FileInfo {
	fi := paddock.FileInfo{Name: f.Name, Path: path.Join(dir, f.Name), Size: f.Size, Type: paddock.FileOther}
	switch {
	case f.IsDir:
		fi.Type = paddock.FileDir
	case f.Mode == "" || f.Mode[0] == '-':
		fi.Type = paddock.FileRegular
	}
	if m, err := strconv.ParseUint(f.Permissions, 8, 32); err == nil {
		fi.Mode = fs.FileMode(m) & fs.ModePerm
	}
	for _, t := range []string{f.ModTime, f.ModifiedAt} {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999 -0700 MST"} {
			if at, err := time.Parse(layout, t); err == nil && fi.ModTime.IsZero() {
				fi.ModTime = at.UTC()
			}
		}
	}
	return fi
}

// call makes one toolbox file call and decodes a 2xx answer into out.
func (tb *toolbox) call(ctx context.Context, method, route string, q url.Values, out any) error {
	status, header, data, err := tb.rest.Call(ctx, tb.a.client, method, route, q, nil)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return tb.rest.StatusError(status, header, data)
	}
	return tb.rest.Decode(data, out)
}

// ListDir lists a directory's entries, sorted by name.
func (a *Adapter) ListDir(ctx context.Context, h paddock.Handle, dir string) ([]paddock.FileInfo, error) {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, err
	}
	return tb.list(ctx, dir)
}

func (tb *toolbox) list(ctx context.Context, dir string) ([]paddock.FileInfo, error) {
	info, err := tb.stat(ctx, dir)
	if err != nil {
		return nil, err
	}
	if info.Type != paddock.FileDir {
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a directory"}
	}
	var entries []fileInfo
	if err := tb.call(ctx, http.MethodGet, "/files", url.Values{"path": {dir}}, &entries); err != nil {
		return nil, err
	}
	return paddock.Listing(entries, func(e fileInfo) paddock.FileInfo { return e.info(dir) }), nil
}

// Stat describes one file.
func (a *Adapter) Stat(ctx context.Context, h paddock.Handle, p string) (paddock.FileInfo, error) {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return paddock.FileInfo{}, err
	}
	return tb.stat(ctx, p)
}

func (tb *toolbox) stat(ctx context.Context, p string) (paddock.FileInfo, error) {
	var f fileInfo
	if err := tb.call(ctx, http.MethodGet, "/files/info", url.Values{"path": {p}}, &f); err != nil {
		return paddock.FileInfo{}, err
	}
	info := f.info(path.Dir(p))
	info.Name, info.Path = path.Base(p), p
	return info, nil
}

// Remove removes a file, an empty directory, or with Recursive a tree.
func (a *Adapter) Remove(ctx context.Context, h paddock.Handle, p string, opts paddock.RemoveOpts) error {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return err
	}
	info, err := tb.stat(ctx, p)
	if err != nil {
		return err
	}
	q := url.Values{"path": {p}}
	if info.Type == paddock.FileDir {
		if !opts.Recursive {
			entries, err := tb.list(ctx, p)
			if err != nil {
				return err
			}
			if len(entries) > 0 {
				return &paddock.InvalidError{Detail: paddock.DetailPath + ": the directory is not empty"}
			}
		}
		q.Set("recursive", "true")
	}
	return tb.call(ctx, http.MethodDelete, "/files", q, nil)
}

// Rename moves from to to, replacing a file at to.
func (a *Adapter) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return err
	}
	q := url.Values{"source": {from}, "destination": {to}}
	err = tb.call(ctx, http.MethodPost, "/files/move", q, nil)
	var inv *paddock.InvalidError
	if !errors.As(err, &inv) || inv.Status != http.StatusConflict {
		return err
	}
	there, serr := tb.stat(ctx, to)
	switch {
	case serr != nil:
		return serr
	case there.Type == paddock.FileDir:
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": a directory is at the destination"}
	}
	if err := tb.call(ctx, http.MethodDelete, "/files", url.Values{"path": {to}}, nil); err != nil {
		return err
	}
	return tb.call(ctx, http.MethodPost, "/files/move", q, nil)
}

// MakeDir makes a directory with opts.Mode exactly.
func (a *Adapter) MakeDir(ctx context.Context, h paddock.Handle, p string, opts paddock.MakeDirOpts) error {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return err
	}
	needed, err := opts.Needed(p, func(p string) (paddock.FileInfo, error) { return tb.stat(ctx, p) })
	if !needed {
		return err
	}
	mode := strconv.FormatUint(uint64(opts.Mode.Perm()), 8)
	if err := tb.call(ctx, http.MethodPost, "/files/folder", url.Values{"path": {p}, "mode": {mode}}, nil); err != nil {
		return err
	}
	return tb.call(ctx, http.MethodPost, "/files/permissions", url.Values{"path": {p}, "mode": {mode}}, nil)
}
