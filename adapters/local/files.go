package local

import (
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock"
)

var _ paddock.HostPather = (*Adapter)(nil)

// Files live in the sandbox's fs directory. A path is sandbox-absolute
// ("/data/in.txt" is <sandbox>/fs/data/in.txt; the path HostPath returns is
// accepted too) and may not leave that directory: a ".." segment, or a
// symbolic link whose target is outside, is refused as invalid before any
// byte is read or written outside. Symlinks are resolved by os.Root, which
// confines every step of the walk to the directory.

// errEscape is a path that would leave the sandbox.
var errEscape = errors.New("path escapes the sandbox")

// sandboxRelative turns a sandbox path into a clean path relative to the
// sandbox's files; any ".." segment is refused.
func sandboxRelative(p string) (string, error) {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", errEscape
		}
	}
	rel := strings.TrimPrefix(path.Clean("/"+p), "/")
	rel = cmp.Or(rel, ".")
	return rel, nil
}

// filesDir is the directory of the sandbox's files.
func (a *Adapter) filesDir(name string) string { return filepath.Join(a.dirOf(name), fsDir) }

// relative maps a caller's path (sandbox-absolute, or a HostPath of this
// sandbox) to a path relative to its files, or an invalid error.
func (a *Adapter) relative(name, p string) (string, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return "", err
	}
	files := a.filesDir(name)
	if rest, ok := strings.CutPrefix(p, files+"/"); ok {
		p = "/" + rest
	}
	rel, err := sandboxRelative(p)
	if err != nil {
		return "", pathInvalid(err)
	}
	return rel, nil
}

func pathInvalid(err error) error {
	return &paddock.InvalidError{Detail: paddock.DetailPath + ": " + err.Error()}
}

// HostPath is where a process of the sandbox sees path: inside the
// sandbox's files directory. An invalid path is returned unchanged.
func (a *Adapter) HostPath(h paddock.Handle, p string) string {
	rel, err := a.relative(h.Name, p)
	if err != nil {
		return p
	}
	return filepath.Join(a.filesDir(h.Name), rel)
}

// openFiles opens the sandbox's files directory as an os.Root.
func (a *Adapter) openFiles(name string) (*os.Root, error) {
	if _, err := a.readMeta(name); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(a.filesDir(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, paddock.ErrNotFound
	}
	if err != nil {
		return nil, unavailable("opening the sandbox's files", err)
	}
	return root, nil
}

// fileError maps a confined file operation's failure.
func fileError(err error) error {
	switch {
	case isEscape(err):
		return pathInvalid(errEscape)
	case errors.Is(err, fs.ErrNotExist):
		return paddock.ErrNotFound
	case errors.Is(err, fs.ErrExist), isDirError(err):
		return pathInvalid(err)
	}
	return unavailable("file", err)
}

// isEscape recognises os.Root's refusal of a path leaving the root. The
// standard library offers no sentinel for it, only this text.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

func isDirError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory")
}

// WriteFile streams r into path, creating parent directories: into a
// staging file beside it, renamed over path once every byte is written,
// so a failure leaves path as it was (a symbolic link at path, inside the
// sandbox, is replaced by the file).
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	rel, root, err := a.openPath(h.Name, p)
	if err != nil {
		return err
	}
	defer root.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fileError(err)
		}
	}
	if info, err := root.Lstat(rel); err == nil {
		switch _, serr := root.Stat(rel); {
		case info.IsDir():
			return pathInvalid(errors.New("a directory is at the path"))
		case isEscape(serr): // a link out of the sandbox is refused, as on every read
			return pathInvalid(errEscape)
		}
	}
	staging := paddock.StagingPath(rel)
	f, err := root.OpenFile(staging, os.O_WRONLY|os.O_CREATE|os.O_EXCL, paddock.FilePerm(mode))
	if err != nil {
		return fileError(err)
	}
	src := paddock.NewWriteSource(r)
	_, err = io.Copy(f, ctxReader{ctx, src})
	if err == nil {
		err = f.Chmod(paddock.FilePerm(mode)) // exactly mode, whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(staging, rel)
	}
	if err != nil {
		_ = root.Remove(staging)
		return src.Failure(unavailable("write", err))
	}
	return nil
}

// ReadFile streams the file at path.
func (a *Adapter) ReadFile(_ context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	f, _, root, err := a.openAs(h.Name, p, false)
	if err != nil {
		return nil, err
	}
	root.Close()
	return f, nil
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
