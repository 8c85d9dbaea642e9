package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/paddockhq/paddock"
)

var _ paddock.FileManager = (*Adapter)(nil)

// The file operations of the files capability, on the sandbox's files
// directory through os.Root, so no step of any path leaves it.

// fileInfo describes the file at rel (not following a final symbolic link).
func fileInfo(root *os.Root, rel string) (paddock.FileInfo, error) {
	info, err := root.Lstat(rel)
	if err != nil {
		return paddock.FileInfo{}, fileError(err)
	}
	p := path.Clean("/" + rel)
	fi := paddock.FileInfo{Name: path.Base(p), Path: p, Size: info.Size(), Mode: info.Mode().Perm(), ModTime: info.ModTime().UTC()}
	switch m := info.Mode(); {
	case m.IsRegular():
		fi.Type = paddock.FileRegular
	case m.IsDir():
		fi.Type, fi.Size = paddock.FileDir, 0
	case m&fs.ModeSymlink != 0:
		fi.Type = paddock.FileSymlink
		fi.Target, _ = root.Readlink(rel)
	default:
		fi.Type = paddock.FileOther
	}
	return fi, nil
}

// ListDir lists a directory of the sandbox, sorted by name.
func (a *Adapter) ListDir(_ context.Context, h paddock.Handle, p string) ([]paddock.FileInfo, error) {
	f, rel, root, err := a.openAs(h.Name, p, true)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, unavailable("list", err)
	}
	slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	out := make([]paddock.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := fileInfo(root, path.Join(rel, e.Name()))
		if errors.Is(err, paddock.ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

// Stat describes one file of the sandbox.
func (a *Adapter) Stat(_ context.Context, h paddock.Handle, p string) (paddock.FileInfo, error) {
	rel, root, err := a.openPath(h.Name, p)
	if err != nil {
		return paddock.FileInfo{}, err
	}
	defer root.Close()
	return fileInfo(root, rel)
}

// Remove removes a file or directory of the sandbox.
func (a *Adapter) Remove(_ context.Context, h paddock.Handle, p string, opts paddock.RemoveOpts) error {
	rel, root, err := a.openPath(h.Name, p)
	if err != nil {
		return err
	}
	defer root.Close()
	if rel == "." {
		return pathInvalid(errors.New("the root is not removed"))
	}
	if _, err := root.Lstat(rel); err != nil {
		return fileError(err)
	}
	if opts.Recursive {
		err = root.RemoveAll(rel)
	} else {
		err = root.Remove(rel)
	}
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return pathInvalid(errors.New("the directory is not empty"))
	}
	if err != nil {
		return fileError(err)
	}
	return nil
}

// Rename moves a file or directory of the sandbox, replacing a file at to.
func (a *Adapter) Rename(_ context.Context, h paddock.Handle, from, to string) error {
	relFrom, root, err := a.openPath(h.Name, from)
	if err != nil {
		return err
	}
	defer root.Close()
	relTo, err := a.relative(h.Name, to)
	if err != nil {
		return err
	}
	if relFrom == "." || relTo == "." {
		return pathInvalid(errors.New("the root is not moved"))
	}
	if _, err := root.Lstat(relFrom); err != nil {
		return fileError(err)
	}
	err = root.Rename(relFrom, relTo)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST), errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EINVAL):
		return pathInvalid(err)
	}
	return fileError(err)
}

// MakeDir makes a directory of the sandbox with exactly the mode's
// permission bits.
func (a *Adapter) MakeDir(_ context.Context, h paddock.Handle, p string, opts paddock.MakeDirOpts) error {
	rel, root, err := a.openPath(h.Name, p)
	if err != nil {
		return err
	}
	defer root.Close()
	info, err := root.Lstat(rel)
	switch {
	case err == nil && opts.Parents && info.IsDir():
		return nil
	case err == nil:
		return paddock.ErrAlreadyExists
	case !errors.Is(err, fs.ErrNotExist):
		return fileError(err)
	}
	if opts.Parents {
		err = root.MkdirAll(rel, opts.Mode.Perm())
	} else {
		err = root.Mkdir(rel, opts.Mode.Perm())
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return paddock.ErrAlreadyExists
	case errors.Is(err, syscall.ENOTDIR):
		return pathInvalid(errors.New("a file is in the way"))
	case err != nil:
		return fileError(err)
	}
	if err := root.Chmod(rel, opts.Mode.Perm()); err != nil { // past the umask
		return fileError(err)
	}
	return nil
}

// openAs opens path p of sandbox name inside its root, as a directory
// (dir) or a regular file, and answers invalid for another kind. The
// caller closes the file and the root.
func (a *Adapter) openAs(name, p string, dir bool) (f *os.File, rel string, root *os.Root, err error) {
	rel, root, err = a.openPath(name, p)
	if err != nil {
		return nil, "", nil, err
	}
	f, err = root.Open(rel)
	if err != nil {
		root.Close()
		return nil, "", nil, fileError(err)
	}
	info, err := f.Stat()
	switch {
	case dir && (err != nil || !info.IsDir()):
		err = pathInvalid(errors.New("not a directory"))
	case !dir && (err != nil || !info.Mode().IsRegular()):
		err = pathInvalid(errors.New("not a regular file"))
	}
	if err != nil {
		f.Close()
		root.Close()
		return nil, "", nil, err
	}
	return f, rel, root, nil
}

// openPath resolves p for sandbox name and opens its files directory.
func (a *Adapter) openPath(name, p string) (string, *os.Root, error) {
	rel, err := a.relative(name, p)
	if err != nil {
		return "", nil, err
	}
	root, err := a.openFiles(name)
	if err != nil {
		return "", nil, err
	}
	return rel, root, nil
}
