package docker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
)

// The file operations (docs/contract.md#op-file-operations) run as small scripts in
// the sandbox, as the sandbox user: what that user may not touch is
// invalid with the sandbox's own reason, as for WriteFile.

var _ paddock.FileManager = (*Adapter)(nil)

// ListDir lists a directory's entries (hidden ones too), sorted by name.
func (a *Adapter) ListDir(ctx context.Context, h paddock.Handle, dir string) ([]paddock.FileInfo, error) {
	out, err := a.fileOp(ctx, h, "list", scriptListDir, dir)
	if err != nil {
		return nil, err
	}
	entries, err := parseDescriptions(out, dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries, nil
}

// Stat describes one file (a link itself, with its target).
func (a *Adapter) Stat(ctx context.Context, h paddock.Handle, p string) (paddock.FileInfo, error) {
	out, err := a.fileOp(ctx, h, "stat", scriptStat, p)
	if err != nil {
		return paddock.FileInfo{}, err
	}
	infos, err := parseDescriptions(out, path.Dir(p))
	if err != nil {
		return paddock.FileInfo{}, err
	}
	if len(infos) != 1 {
		return paddock.FileInfo{}, malformedListing
	}
	infos[0].Path = p
	return infos[0], nil
}

// Remove removes a file, an empty directory, or with Recursive a whole
// tree.
func (a *Adapter) Remove(ctx context.Context, h paddock.Handle, p string, opts paddock.RemoveOpts) error {
	recursive := "0"
	if opts.Recursive {
		recursive = "1"
	}
	_, err := a.fileOp(ctx, h, "remove", scriptRemove, p, recursive)
	return err
}

// Rename moves from to to as rename(2) does.
func (a *Adapter) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	_, err := a.fileOp(ctx, h, "rename", scriptRename, from, to)
	return err
}

// MakeDir makes a directory with opts.Mode exactly (past the umask).
func (a *Adapter) MakeDir(ctx context.Context, h paddock.Handle, p string, opts paddock.MakeDirOpts) error {
	parents := "0"
	if opts.Parents {
		parents = "1"
	}
	_, err := a.fileOp(ctx, h, "make_dir", scriptMakeDir, p, "0"+strconv.FormatUint(uint64(opts.Mode.Perm()), 8), parents)
	return err
}

// fileOp runs one file operation's script and maps its exit code.
func (a *Adapter) fileOp(ctx context.Context, h paddock.Handle, op, script string, args ...string) ([]byte, error) {
	out, err := a.run(ctx, h.Name, execSpec{cmd: sh(script, args...)}, nil)
	if err != nil {
		return nil, err
	}
	defer a.touch(h)
	reason := short(string(out.stderr))
	switch out.code {
	case 0:
		return out.stdout, nil
	case 3:
		return nil, paddock.ErrNotFound
	case 4:
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": " + fileOpMismatch[op]}
	case 6:
		return nil, paddock.ErrAlreadyExists
	}
	if reason == "" {
		reason = op + " failed with exit code " + strconv.Itoa(out.code)
	}
	return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": " + reason}
}

// fileOpMismatch says why each operation's script answered 4.
var fileOpMismatch = map[string]string{
	"list":   "not a directory",
	"remove": "the directory is not empty",
	"rename": "the destination is a directory that is not empty, or a file arriving over a directory",
}

var malformedListing = &paddock.ProviderError{Provider: paddock.ProviderDocker, Detail: "malformed file description"}

// parseDescriptions reads scriptDescribe's records: "MODE-HEX SIZE MTIME
// NAMELEN TARGETLEN", a newline, then the name and the target.
func parseDescriptions(b []byte, dir string) ([]paddock.FileInfo, error) {
	r := bufio.NewReader(bytes.NewReader(b))
	infos := []paddock.FileInfo{}
	for {
		line, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			return infos, nil
		}
		if err != nil {
			return nil, malformedListing
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, malformedListing
		}
		mode, err1 := strconv.ParseUint(f[0], 16, 32)
		size, err2 := strconv.ParseInt(f[1], 10, 64)
		mtime, err3 := strconv.ParseInt(f[2], 10, 64)
		nameLen, err4 := strconv.Atoi(f[3])
		targetLen, err5 := strconv.Atoi(f[4])
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil || nameLen <= 0 || targetLen < 0 ||
			nameLen > maxNameBytes || targetLen > maxTargetBytes {
			return nil, malformedListing
		}
		text := make([]byte, nameLen+targetLen)
		if _, err := io.ReadFull(r, text); err != nil {
			return nil, malformedListing
		}
		name := string(text[:nameLen])
		info := paddock.FileInfo{Name: name, Path: path.Join(dir, name), Type: fileType(uint32(mode)), Size: size,
			Mode: fs.FileMode(mode & 0o777), ModTime: time.Unix(mtime, 0).UTC(), Target: string(text[nameLen:])}
		infos = append(infos, info)
	}
}

// Bounds of one description: a name is at most 255 bytes on Linux, a link
// target at most a path.
const (
	maxNameBytes   = 255
	maxTargetBytes = 4096
)

// fileType reads the type bits of a raw st_mode.
func fileType(mode uint32) paddock.FileType {
	switch mode & 0o170000 {
	case 0o100000:
		return paddock.FileRegular
	case 0o040000:
		return paddock.FileDir
	case 0o120000:
		return paddock.FileSymlink
	}
	return paddock.FileOther
}
