package e2b

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"
	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb/filesystempbconnect"
)

// The file operations (docs/contract.md#op-file-operations) use envd's Filesystem
// service. Where envd's operations differ from the contract's, the
// adapter checks first: envd's Remove is recursive and quiet about
// absence, and its MakeDir always makes parents with mode 0755, so
// Remove and MakeDir look before they act (two or three calls, not
// atomic). envd describes a link by what it leads to, naming the resolved
// target: a link is a symlink here with that target.

var _ paddock.FileManager = (*Adapter)(nil)

// files is the Filesystem client of sandbox id, acting as user.
func (a *Adapter) files(id, user string) filesystempbconnect.FilesystemClient {
	return filesystempbconnect.NewFilesystemClient(a.client, a.envdBase(id), connect.WithProtoJSON(),
		connect.WithReadMaxBytes(MaxEnvdMessage), connect.WithInterceptors(envdHeaders{sandbox: id, user: user}))
}

// infoOf converts envd's description of a file found in dir.
func infoOf(e *filesystempb.EntryInfo, dir string) paddock.FileInfo {
	name := e.GetName()
	if name == "" {
		name = path.Base(e.GetPath())
	}
	fi := paddock.FileInfo{Name: name, Path: path.Join(dir, name), Size: e.GetSize(),
		Mode: fs.FileMode(e.GetMode()) & fs.ModePerm, ModTime: e.GetModifiedTime().AsTime().UTC()}
	switch {
	case strings.HasPrefix(e.GetPermissions(), "L") || e.GetType() == filesystempb.FileType_FILE_TYPE_SYMLINK:
		fi.Type, fi.Target = paddock.FileSymlink, e.GetSymlinkTarget()
	case e.GetType() == filesystempb.FileType_FILE_TYPE_DIRECTORY:
		fi.Type = paddock.FileDir
	case e.GetType() == filesystempb.FileType_FILE_TYPE_FILE:
		fi.Type = paddock.FileRegular
	default:
		fi.Type = paddock.FileOther
	}
	return fi
}

// ListDir lists a directory's entries (one level), sorted by name.
func (a *Adapter) ListDir(ctx context.Context, h paddock.Handle, dir string) ([]paddock.FileInfo, error) {
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	res, err := a.files(id, a.cfg.User).ListDir(ctx, connect.NewRequest(&filesystempb.ListDirRequest{Path: dir, Depth: 1}))
	if err != nil {
		return nil, fileError(err)
	}
	return paddock.Listing(res.Msg.GetEntries(), func(e *filesystempb.EntryInfo) paddock.FileInfo { return infoOf(e, dir) }), nil
}

// Stat describes one file.
func (a *Adapter) Stat(ctx context.Context, h paddock.Handle, p string) (paddock.FileInfo, error) {
	id, err := a.running(ctx, h)
	if err != nil {
		return paddock.FileInfo{}, err
	}
	return a.stat(ctx, id, p)
}

func (a *Adapter) stat(ctx context.Context, id, p string) (paddock.FileInfo, error) {
	res, err := a.files(id, a.cfg.User).Stat(ctx, connect.NewRequest(&filesystempb.StatRequest{Path: p}))
	if err != nil {
		return paddock.FileInfo{}, fileError(err)
	}
	info := infoOf(res.Msg.GetEntry(), path.Dir(p))
	info.Name, info.Path = path.Base(p), p
	return info, nil
}

// Remove removes a file, an empty directory, or with Recursive a tree.
func (a *Adapter) Remove(ctx context.Context, h paddock.Handle, p string, opts paddock.RemoveOpts) error {
	id, err := a.running(ctx, h)
	if err != nil {
		return err
	}
	info, err := a.stat(ctx, id, p)
	if err != nil {
		return err
	}
	if info.Type == paddock.FileDir && !opts.Recursive {
		res, err := a.files(id, a.cfg.User).ListDir(ctx, connect.NewRequest(&filesystempb.ListDirRequest{Path: p, Depth: 1}))
		if err != nil {
			return fileError(err)
		}
		if len(res.Msg.GetEntries()) > 0 {
			return &paddock.InvalidError{Detail: paddock.DetailPath + ": the directory is not empty"}
		}
	}
	_, err = a.files(id, a.cfg.User).Remove(ctx, connect.NewRequest(&filesystempb.RemoveRequest{Path: p}))
	return fileError(err)
}

// Rename moves from to to.
func (a *Adapter) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	id, err := a.running(ctx, h)
	if err != nil {
		return err
	}
	_, err = a.files(id, a.cfg.User).Move(ctx, connect.NewRequest(&filesystempb.MoveRequest{Source: from, Destination: to}))
	return fileError(err)
}

// MakeDir makes a directory with opts.Mode (a chmod after envd's 0755).
func (a *Adapter) MakeDir(ctx context.Context, h paddock.Handle, p string, opts paddock.MakeDirOpts) error {
	id, err := a.running(ctx, h)
	if err != nil {
		return err
	}
	if !opts.Parents {
		parent, err := a.stat(ctx, id, path.Dir(p))
		if err != nil {
			return err
		}
		if parent.Type != paddock.FileDir {
			return &paddock.InvalidError{Detail: paddock.DetailPath + ": the parent is not a directory"}
		}
	}
	_, err = a.files(id, a.cfg.User).MakeDir(ctx, connect.NewRequest(&filesystempb.MakeDirRequest{Path: p}))
	switch {
	case connect.CodeOf(err) == connect.CodeAlreadyExists && opts.Parents:
		return nil // a directory is there already
	case connect.CodeOf(err) == connect.CodeAlreadyExists, connect.CodeOf(err) == connect.CodeInvalidArgument:
		return paddock.ErrAlreadyExists // a directory, or a file, is there
	case err != nil:
		return fileError(err)
	case opts.Mode.Perm() == 0o755:
		return nil
	}
	res, err := a.Exec(ctx, h, paddock.NewCmd("chmod", strconv.FormatUint(uint64(opts.Mode.Perm()), 8), p), paddock.ExecOpts{})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return &paddock.UnavailableError{Detail: "e2b: chmod of the new directory failed: " + string(res.Stderr)}
	}
	return nil
}

// fileError maps a Filesystem failure: absence is not_found, a request
// envd refuses (a file where a directory is needed) invalid with the
// path detail.
func fileError(err error) error {
	if err == nil {
		return nil
	}
	mapped := envdError(err)
	var inv *paddock.InvalidError
	if errors.As(mapped, &inv) && connect.CodeOf(err) == connect.CodeInvalidArgument {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": " + inv.Detail}
	}
	return mapped
}
