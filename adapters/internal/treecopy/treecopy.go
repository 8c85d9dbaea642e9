// Package treecopy copies a directory tree as it is: regular files (by
// reflink where the filesystem shares blocks, else by copying), their
// modes and times, directories and symbolic links (never followed).
// Other kinds of file (sockets, devices, FIFOs) are left out and counted.
package treecopy

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Stats is what a copy or a measure saw.
type Stats struct {
	Files, Dirs, Links, Skipped int
	Bytes                       int64 // the regular files' sizes
}

// Measure walks src and counts what Copy would copy, without copying.
func Measure(src string) (Stats, error) {
	var st Stats
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			st.Files++
			st.Bytes += info.Size()
		case d.IsDir():
			st.Dirs++
		case d.Type()&fs.ModeSymlink != 0:
			st.Links++
		default:
			st.Skipped++
		}
		return nil
	})
	return st, err
}

// Copy copies the tree at src to dst, which must not exist. On failure
// dst may hold part of the tree; the caller removes it.
func Copy(src, dst string) (Stats, error) {
	var st Stats
	type dirTime struct {
		path string
		mod  time.Time
	}
	var dirs []dirTime // set after their contents, which change them
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			// Owner-writable while filled; its own mode is set at the end.
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			st.Dirs++
			dirs = append(dirs, dirTime{target, info.ModTime()})
			return keepOwner(target, info)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			st.Links++
			return keepOwner(target, info)
		case d.Type().IsRegular():
			if err := copyFile(p, target, info); err != nil {
				return fmt.Errorf("copying %s: %w", rel, err)
			}
			st.Files++
			st.Bytes += info.Size()
			return nil
		}
		st.Skipped++
		return nil
	})
	if err != nil {
		return st, err
	}
	// Modes and times of directories last, deepest first.
	for i := len(dirs) - 1; i >= 0; i-- {
		info, err := os.Lstat(filepath.Join(src, mustRel(dst, dirs[i].path)))
		if err != nil {
			return st, err
		}
		if err := os.Chmod(dirs[i].path, info.Mode().Perm()|info.Mode()&(fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid)); err != nil {
			return st, err
		}
		if err := os.Chtimes(dirs[i].path, dirs[i].mod, dirs[i].mod); err != nil {
			return st, err
		}
	}
	return st, nil
}

func mustRel(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		panic(err) // p was made under base
	}
	return rel
}

// copyFile copies one regular file with its mode and times, sharing its
// blocks where the filesystem can.
func copyFile(src, dst string, info fs.FileInfo) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if !reflink(out, in) {
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
	}
	if err := keepOwner(dst, info); err != nil {
		return err
	}
	if err := out.Chmod(info.Mode().Perm() | info.Mode()&(fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid)); err != nil {
		return err
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
}

// RemoveAll removes a tree, making its directories writable first where
// a read-only one stops the removal (a copied tree may hold some).
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
