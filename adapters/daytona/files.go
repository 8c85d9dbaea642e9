package daytona

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// WriteFile streams r into path as a multipart upload (the daemon makes
// the parents), then sets mode's permission bits with chmod when they are
// not the 0644 a new file gets. Nothing is held whole in memory, and r is
// never read after WriteFile returns.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(p); err != nil {
		return err
	}
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return err
	}
	upload := httpx.NewMultipart("file", path.Base(p), r)
	req, err := tb.rest.NewRequest(ctx, http.MethodPost, "/files/upload", url.Values{"path": {p}}, upload.Body)
	if err != nil {
		upload.Done()
		return err
	}
	req.Header.Set("Content-Type", upload.ContentType)
	res, err := a.streaming.Do(req)
	upload.Done() // r is never read after WriteFile returns
	if err != nil {
		return httpx.Transport(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return tb.rest.StatusError(res.StatusCode, res.Header, body)
	}
	if mode.Perm() == 0o644 {
		return nil
	}
	res2, err := a.Exec(ctx, h, paddock.NewCmd("chmod", strconv.FormatUint(uint64(mode.Perm()), 8), p), paddock.ExecOpts{})
	if err != nil {
		return err
	}
	if res2.ExitCode != 0 {
		return &paddock.UnavailableError{Detail: "daytona: chmod of the written file failed: " + string(res2.Stderr)}
	}
	return nil
}

// ReadFile streams the file at path; ErrNotFound when it is absent, a
// directory is invalid.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return nil, err
	}
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, err
	}
	req, err := tb.rest.NewRequest(ctx, http.MethodGet, "/files/download", url.Values{"path": {p}}, nil)
	if err != nil {
		return nil, err
	}
	res, err := a.streaming.Do(req)
	if err != nil {
		return nil, httpx.Transport(err)
	}
	if res.StatusCode == http.StatusOK {
		return res.Body, nil
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
	switch res.StatusCode {
	case http.StatusNotFound:
		return nil, paddock.ErrNotFound
	case http.StatusBadRequest:
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a file", Status: res.StatusCode}
	}
	return nil, tb.rest.StatusError(res.StatusCode, res.Header, body)
}
