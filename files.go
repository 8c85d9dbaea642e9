package paddock

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// FileType is what a directory entry is.
type FileType string

// The file types.
const (
	FileRegular FileType = "file"
	FileDir     FileType = "dir"
	FileSymlink FileType = "symlink"
	FileOther   FileType = "other" // a device, socket or pipe
)

// FileInfo describes one file of a sandbox (docs/contract.md#op-file-operations). A
// symbolic link is described itself, not what it points to; Target is its
// target as the link holds it.
type FileInfo struct {
	Name    string      `json:"name"` // the last element of Path
	Path    string      `json:"path"` // absolute
	Type    FileType    `json:"type"`
	Size    int64       `json:"size"`
	Mode    fs.FileMode `json:"mode"` // the permission bits
	ModTime time.Time   `json:"mod_time"`
	Target  string      `json:"target,omitempty"`
}

// RemoveOpts: Recursive removes a directory and everything in it; without
// it, only a file or an empty directory is removed.
type RemoveOpts struct {
	Recursive bool `json:"recursive,omitempty"`
}

// MakeDirOpts: Parents makes missing parents too and accepts a directory
// that already exists; Mode is the new directories' permission bits (0 =
// 0o755).
type MakeDirOpts struct {
	Parents bool        `json:"parents,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
}

// Needed judges a MakeDir of p by what stat says of p and its parent, for
// a provider whose own call would not: false when the directory already
// exists and Parents accepts it; already_exists when something is there;
// without Parents, the parent's not_found, or invalid when it is not a
// directory.
func (o MakeDirOpts) Needed(p string, stat func(p string) (FileInfo, error)) (bool, error) {
	switch info, err := stat(p); {
	case err == nil && o.Parents && info.Type == FileDir:
		return false, nil
	case err == nil:
		return false, ErrAlreadyExists
	case !errors.Is(err, ErrNotFound):
		return false, err
	}
	if o.Parents {
		return true, nil
	}
	parent, err := stat(path.Dir(p))
	if err != nil {
		return false, err
	}
	if parent.Type != FileDir {
		return false, &InvalidError{Detail: DetailPath + ": the parent is not a directory"}
	}
	return true, nil
}

// FileManager is implemented by adapters offering CapFiles. Paths arrive
// validated and cleaned (absolute, no NUL, no "." or ".." elements).
type FileManager interface {
	// ListDir lists a directory's entries, sorted by name; not_found when
	// it is absent, invalid when it is not a directory.
	ListDir(ctx context.Context, h Handle, path string) ([]FileInfo, error)
	// Stat describes one file; not_found when it is absent.
	Stat(ctx context.Context, h Handle, path string) (FileInfo, error)
	// Remove removes a file or directory; not_found when it is absent,
	// invalid for a directory that is not empty without Recursive.
	Remove(ctx context.Context, h Handle, path string, opts RemoveOpts) error
	// Rename moves from to to, replacing a file at to; not_found when from
	// is absent.
	Rename(ctx context.Context, h Handle, from, to string) error
	// MakeDir makes a directory; already_exists when something is at path
	// (unless Parents and it is a directory), not_found when its parent is
	// missing without Parents.
	MakeDir(ctx context.Context, h Handle, path string, opts MakeDirOpts) error
}

// CleanPath validates a sandbox path for the file operations and returns
// it cleaned: absolute, no NUL byte, and no ".." element (a path that
// climbs is refused, not resolved: the contract confines paths to the
// sandbox).
func CleanPath(p string) (string, error) {
	if err := ValidatePath(p); err != nil {
		return "", err
	}
	return path.Clean(p), nil
}

// fileManager is a's FileManager when a advertises CapFiles.
func fileManager(a Adapter) (FileManager, bool) {
	f, ok := a.(FileManager)
	return f, ok && Supports(a, CapFiles)
}

// ListDir validates the path and calls a's ListDir when a advertises
// CapFiles; otherwise ErrNotSupported.
func ListDir(ctx context.Context, a Adapter, h Handle, p string) ([]FileInfo, error) {
	p, err := CleanPath(p)
	if err != nil {
		return nil, err
	}
	f, ok := fileManager(a)
	if !ok {
		return nil, ErrNotSupported
	}
	return f.ListDir(ctx, h, p)
}

// Listing is how a FileManager answers ListDir from its provider's
// entries: each entry's FileInfo, sorted by name.
func Listing[E any](entries []E, info func(E) FileInfo) []FileInfo {
	out := make([]FileInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, info(e))
	}
	slices.SortFunc(out, func(x, y FileInfo) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// Stat validates the path and calls a's Stat when a advertises CapFiles;
// otherwise ErrNotSupported.
func Stat(ctx context.Context, a Adapter, h Handle, p string) (FileInfo, error) {
	p, err := CleanPath(p)
	if err != nil {
		return FileInfo{}, err
	}
	f, ok := fileManager(a)
	if !ok {
		return FileInfo{}, ErrNotSupported
	}
	return f.Stat(ctx, h, p)
}

// Remove validates the path and calls a's Remove when a advertises
// CapFiles; otherwise ErrNotSupported. The root "/" is never removed.
func Remove(ctx context.Context, a Adapter, h Handle, p string, opts RemoveOpts) error {
	p, err := CleanPath(p)
	if err != nil {
		return err
	}
	if p == "/" {
		return &InvalidError{Detail: DetailPath + ": the root is not removed"}
	}
	f, ok := fileManager(a)
	if !ok {
		return ErrNotSupported
	}
	return f.Remove(ctx, h, p, opts)
}

// Rename validates both paths and calls a's Rename when a advertises
// CapFiles; otherwise ErrNotSupported. Renaming the root, or a directory
// into itself, is invalid.
func Rename(ctx context.Context, a Adapter, h Handle, from, to string) error {
	from, err := CleanPath(from)
	if err != nil {
		return err
	}
	if to, err = CleanPath(to); err != nil {
		return err
	}
	if from == "/" || to == "/" || strings.HasPrefix(to, from+"/") {
		return &InvalidError{Detail: DetailPath + ": cannot move the root, or a directory into itself"}
	}
	f, ok := fileManager(a)
	if !ok {
		return ErrNotSupported
	}
	return f.Rename(ctx, h, from, to)
}

// MakeDir validates the path and options and calls a's MakeDir when a
// advertises CapFiles; otherwise ErrNotSupported.
func MakeDir(ctx context.Context, a Adapter, h Handle, p string, opts MakeDirOpts) error {
	p, err := CleanPath(p)
	if err != nil {
		return err
	}
	if opts.Mode&^fs.ModePerm != 0 {
		return &InvalidError{Detail: DetailPath + ": mode holds more than permission bits"}
	}
	opts.Mode = cmp.Or(opts.Mode, 0o755)
	f, ok := fileManager(a)
	if !ok {
		return ErrNotSupported
	}
	return f.MakeDir(ctx, h, p, opts)
}

// FilePerm is the permission bits WriteFile gives a file written with
// mode: mode's own, or 0644 when it has none.
func FilePerm(mode fs.FileMode) fs.FileMode {
	if mode.Perm() == 0 {
		return 0o644
	}
	return mode.Perm()
}

// WriteSource is a WriteFile's reader as an adapter reads it: it keeps the
// reader's first failure, so the write answers that rather than whatever a
// transport made of it (a cut upload, a closed pipe). One goroutine reads
// it at a time; Failure may be asked from any.
type WriteSource struct {
	r   io.Reader
	mu  sync.Mutex
	err error // the reader's first error but io.EOF
}

// NewWriteSource wraps a WriteFile's reader.
func NewWriteSource(r io.Reader) *WriteSource { return &WriteSource{r: r} }

func (s *WriteSource) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return n, err
}

// Failure is the answer of a write that failed with err: the reader's own
// failure when there was one (a typed error as it is, any other as
// invalid(file_source) wrapping it), else err.
func (s *WriteSource) Failure(err error) error {
	s.mu.Lock()
	failed := s.err
	s.mu.Unlock()
	switch {
	case failed == nil:
		return err
	case KindOf(failed) != "":
		return failed
	}
	return fmt.Errorf("%w: %w", &InvalidError{Detail: DetailFileSource + ": the content's reader failed"}, failed)
}

// StagingPath is where an adapter stages a write of p before it renames
// the whole file into place: a hidden name beside p (so the rename stays
// on one file system), unique to the call.
func StagingPath(p string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return path.Join(path.Dir(p), stagingPrefix+hex.EncodeToString(b)+stagingSuffix)
}

const stagingPrefix, stagingSuffix = ".paddock-", ".part"

// StagingCleanupTimeout bounds the end of a staged write whose context
// ended or that failed, each step on a context of its own (the write's may
// be what ended): finishing the upload it had begun, and removing the
// staging file.
const StagingCleanupTimeout = 30 * time.Second

// IsStagingPath reports whether p is a name StagingPath makes.
func IsStagingPath(p string) bool {
	base := path.Base(p)
	id, prefixed := strings.CutPrefix(base, stagingPrefix)
	id, suffixed := strings.CutSuffix(id, stagingSuffix)
	if !prefixed || !suffixed || len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}
