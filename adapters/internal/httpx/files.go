package httpx

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path"

	"github.com/paddockhq/paddock"
)

// Files is WriteFile and ReadFile for a provider whose file daemon takes
// an upload as multipart (making the parents) and serves a download by
// GET, and whose upload takes no mode (chmod sets it after): embed it in
// the adapter (see NewFiles). Nothing is held whole in memory, and an
// upload's reader is never read after WriteFile returns.
type Files struct {
	adapter   fileDaemon
	streaming *http.Client
	open      func(ctx context.Context, h paddock.Handle) (*REST, FileRequest, error)
}

// NewFiles is the Files of adapter (which runs the chmod): bodies travel
// on streaming (no overall timeout), and open finds h's file daemon, the
// REST its answers are read with and how to build the request of a file
// (neither is used when it fails).
func NewFiles(adapter fileDaemon, streaming *http.Client, open func(ctx context.Context, h paddock.Handle) (*REST, FileRequest, error)) Files {
	return Files{adapter: adapter, streaming: streaming, open: open}
}

// fileDaemon is the adapter of a Files: it runs the chmod and moves the
// staged upload into place.
type fileDaemon interface {
	paddock.Adapter
	paddock.FileManager
}

// FileRequest builds the request of the file at p with method, on ctx:
// POST with the body to upload, GET to download.
type FileRequest func(ctx context.Context, method, p string, body io.Reader) (*http.Request, error)

// WriteFile streams r into a staging file beside p, sets mode's
// permission bits, then renames it over p (see Staged).
func (f Files) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(p); err != nil {
		return err
	}
	rest, request, err := f.open(ctx, h)
	if err != nil {
		return err
	}
	return Staged(ctx, f.adapter, h, p, r, func(upload context.Context, staging string, src io.Reader) error {
		err := rest.Upload(f.streaming, path.Base(p), src, func(body io.Reader) (*http.Request, error) {
			return request(upload, http.MethodPost, staging, body)
		})
		if err != nil {
			return err
		}
		return SetMode(ctx, f.adapter, h, staging, mode)
	})
}

// Staged writes a file all or nothing through a file daemon that writes
// in place: put uploads the content (src: r as read) to a staging path
// beside p, which fm renames over p once the whole upload succeeded; a
// failed attempt removes the staging file, and answers r's own failure
// when r failed (paddock.WriteSource). The upload's body ends where r
// fails or ctx ends, and its context (upload) outlives ctx by
// paddock.StagingCleanupTimeout, so the daemon finishes the staging file
// and answers before its removal is asked: an upload cut short could still
// be written after the removal, by a daemon that reads it later.
func Staged(ctx context.Context, fm paddock.FileManager, h paddock.Handle, p string, r io.Reader, put func(upload context.Context, staging string, src io.Reader) error) error {
	staging := paddock.StagingPath(p)
	src := paddock.NewWriteSource(r)
	upload, stop := paddock.Settle(ctx, paddock.StagingCleanupTimeout)
	err := put(upload, staging, uploadBody{src: src, ctx: ctx})
	stop()
	if err == nil {
		err = src.Failure(nil) // r failed: the daemon stored what came before, which is removed now
	}
	if err == nil && ctx.Err() != nil {
		err = Transport(ctx.Err()) // the body ended with ctx
	}
	if err == nil {
		err = fm.Rename(ctx, h, staging, p)
	}
	if err != nil {
		if leftBehind(err) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), paddock.StagingCleanupTimeout)
			defer cancel()
			_ = fm.Remove(rctx, h, staging, paddock.RemoveOpts{})
		}
		return src.Failure(err)
	}
	return nil
}

// uploadBody is an upload's body that ends where its source failed or
// the caller's context ended (WriteSource keeps the failure).
type uploadBody struct {
	src *paddock.WriteSource
	ctx context.Context
}

func (b uploadBody) Read(p []byte) (int, error) {
	if b.ctx.Err() != nil {
		return 0, io.EOF
	}
	n, err := b.src.Read(p)
	if err != nil && err != io.EOF {
		return n, io.EOF
	}
	return n, err
}

// leftBehind reports whether a failed staged write may have left its
// staging file: not when the daemon refused the call outright.
func leftBehind(err error) bool {
	return !errors.Is(err, paddock.ErrDenied) && !errors.Is(err, paddock.ErrNotFound) && !errors.Is(err, paddock.ErrRateLimited)
}

// ReadFile streams the file at p; not_found when it is absent.
func (f Files) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return nil, err
	}
	rest, request, err := f.open(ctx, h)
	if err != nil {
		return nil, err
	}
	req, err := request(ctx, http.MethodGet, p, nil)
	if err != nil {
		return nil, err
	}
	return rest.Download(f.streaming, req)
}
