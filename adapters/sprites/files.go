package sprites

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// WriteFile streams r to path, creating parent directories: to a staging
// file beside it, renamed over it once written (httpx.Staged).
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(path); err != nil {
		return err
	}
	return httpx.Staged(ctx, a, h, path, r, func(upload context.Context, staging string, src io.Reader) error {
		return a.put(upload, h, staging, mode, src)
	})
}

// put is one write of the file daemon, in place.
func (a *Adapter) put(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	q := url.Values{"path": {path}, "workingDir": {"/"}, "mode": {"0" + strconv.FormatUint(uint64(paddock.FilePerm(mode)), 8)}, "mkdirParents": {"true"}}
	req, err := a.rest.NewRequest(ctx, http.MethodPut, spritePath(h.Name, "fs", "write"), q, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := a.streaming.Do(req)
	if err != nil {
		return httpx.Transport(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
		return statusError(res.StatusCode, res.Header, data)
	}
	return nil
}

// ReadFile streams the file at path; a missing file is not_found.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(path); err != nil {
		return nil, err
	}
	req, err := a.rest.NewRequest(ctx, http.MethodGet, spritePath(h.Name, "fs", "read"), url.Values{"path": {path}, "workingDir": {"/"}}, nil)
	if err != nil {
		return nil, err
	}
	res, err := a.streaming.Do(req)
	if err != nil {
		return nil, httpx.Transport(err)
	}
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusPartialContent {
		defer res.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
		return nil, statusError(res.StatusCode, res.Header, data)
	}
	return res.Body, nil
}
