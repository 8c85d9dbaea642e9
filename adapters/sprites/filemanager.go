package sprites

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
)

// The file operations (docs/contract.md#op-file-operations) use the sprite's
// filesystem routes as Sprites' own client does: /fs/list (a directory's
// entries, or a file alone), /fs/delete, /fs/rename and /fs/chmod. There
// is no route that makes a directory: MakeDir writes a marker file with
// mkdirParents, removes it, then sets the mode (three calls, not atomic).

var _ paddock.FileManager = (*Adapter)(nil)

// fsEntry is one file as /fs/list describes it.
type fsEntry struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Type    string    `json:"type"`
	Size    int64     `json:"size"`
	Mode    string    `json:"mode"`
	ModTime time.Time `json:"modTime"`
	IsDir   bool      `json:"isDir"`
}

// fsList is /fs/list's answer.
type fsList struct {
	Path    string     `json:"path"`
	Entries *[]fsEntry `json:"entries"`
}

// info converts an entry found under dir.
func (e fsEntry) info(dir string) paddock.FileInfo {
	name := path.Base(e.Name)
	fi := paddock.FileInfo{Name: name, Path: path.Join(dir, name), Size: e.Size, ModTime: e.ModTime.UTC()}
	switch {
	case e.IsDir || e.Type == "directory":
		fi.Type = paddock.FileDir
	case e.Type == "file":
		fi.Type = paddock.FileRegular
	case e.Type == "symlink":
		fi.Type = paddock.FileSymlink
	default:
		fi.Type = paddock.FileOther
	}
	if m, err := strconv.ParseUint(e.Mode, 8, 32); err == nil {
		fi.Mode = fs.FileMode(m) & fs.ModePerm
	}
	return fi
}

// list asks /fs/list about p.
func (a *Adapter) list(ctx context.Context, h paddock.Handle, p string) ([]fsEntry, error) {
	var got fsList
	err := a.rest.JSON(ctx, a.client, http.MethodGet, spritePath(h.Name, "fs", "list"), url.Values{"path": {p}, "workingDir": {"/"}}, nil, &got)
	if err != nil {
		return nil, err
	}
	if got.Entries == nil {
		return nil, &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "a file listing without entries"}
	}
	return *got.Entries, nil
}

// ListDir lists a directory's entries, sorted by name. A listing of a file
// (the file alone, under its own path) is invalid.
func (a *Adapter) ListDir(ctx context.Context, h paddock.Handle, dir string) ([]paddock.FileInfo, error) {
	entries, err := a.list(ctx, h, dir)
	if err != nil {
		return nil, err
	}
	if len(entries) == 1 && !entries[0].IsDir && path.Clean(entries[0].Path) == dir {
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a directory"}
	}
	return paddock.Listing(entries, func(e fsEntry) paddock.FileInfo { return e.info(dir) }), nil
}

// Stat describes one file, found in its parent's listing (a listing of a
// directory is its entries, so the parent's is the one that describes it).
func (a *Adapter) Stat(ctx context.Context, h paddock.Handle, p string) (paddock.FileInfo, error) {
	if p == "/" {
		return paddock.FileInfo{Name: "/", Path: "/", Type: paddock.FileDir, Mode: 0o755}, nil
	}
	dir, name := path.Split(p)
	dir = path.Clean(dir)
	entries, err := a.list(ctx, h, dir)
	if err != nil {
		return paddock.FileInfo{}, err
	}
	for _, e := range entries {
		if path.Base(e.Name) == name {
			return e.info(dir), nil
		}
	}
	return paddock.FileInfo{}, paddock.ErrNotFound
}

// Remove removes a file, an empty directory, or with Recursive a tree.
func (a *Adapter) Remove(ctx context.Context, h paddock.Handle, p string, opts paddock.RemoveOpts) error {
	q := url.Values{"path": {p}, "workingDir": {"/"}}
	if opts.Recursive {
		q.Set("recursive", "true")
	}
	return a.rest.JSON(ctx, a.client, http.MethodDelete, spritePath(h.Name, "fs", "delete"), q, nil, nil)
}

// Rename moves from to to.
func (a *Adapter) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	body := map[string]string{"source": from, "dest": to, "workingDir": "/"}
	return a.rest.JSON(ctx, a.client, http.MethodPost, spritePath(h.Name, "fs", "rename"), nil, body, nil)
}

// MakeDir makes a directory with opts.Mode.
func (a *Adapter) MakeDir(ctx context.Context, h paddock.Handle, p string, opts paddock.MakeDirOpts) error {
	needed, err := opts.Needed(p, func(p string) (paddock.FileInfo, error) { return a.Stat(ctx, h, p) })
	if !needed {
		return err
	}
	marker := path.Join(p, ".paddock-mkdir-"+randomSuffix())
	if err := a.WriteFile(ctx, h, marker, 0o600, strings.NewReader("")); err != nil {
		return err
	}
	if err := a.Remove(ctx, h, marker, paddock.RemoveOpts{}); err != nil {
		return err
	}
	body := map[string]string{"path": p, "workingDir": "/", "mode": "0" + strconv.FormatUint(uint64(opts.Mode.Perm()), 8)}
	return a.rest.JSON(ctx, a.client, http.MethodPost, spritePath(h.Name, "fs", "chmod"), nil, body, nil)
}

// randomSuffix names a marker file no one else will.
func randomSuffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
