package stubfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// CopyTree copies src to dst (dst's parent must exist) as a disk snapshot
// keeps it: files with their modes, owners and extended attributes (where
// this machine lets the server set them), directories with their entries,
// links as links. Sockets, pipes and devices are left out. Onto a tree
// already there (a new sandbox's prepared root), it adds and overwrites.
func CopyTree(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if current, err := os.Readlink(dst); err != nil || current != target { // the same link is there already
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
		}
	case info.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, fs.ErrExist) { // writable while it fills
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := CopyTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		if err := os.Chmod(dst, info.Mode()&(fs.ModePerm|fs.ModeSticky|fs.ModeSetuid|fs.ModeSetgid)); err != nil {
			return err
		}
	case !info.Mode().IsRegular():
		return nil
	default:
		if err := copyFile(src, dst, info.Mode().Perm()); err != nil {
			return err
		}
	}
	if uid, gid, ok := stubproc.Owner(info); ok {
		_ = os.Lchown(dst, uid, gid) // refused unless the server is root: the copy is then the server's
	}
	copyXattrs(src, dst)
	return nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(perm) // the umask took bits from the create's
	}
	return errors.Join(err, out.Close())
}
