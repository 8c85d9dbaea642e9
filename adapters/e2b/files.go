package e2b

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

// filesRequest builds a /files request of sandbox id for path, as the
// configured user.
func (a *Adapter) filesRequest(ctx context.Context, method, id, p string, body io.Reader) (*http.Request, error) {
	return a.filesRequestAs(ctx, method, id, p, a.cfg.User, body)
}

// filesRequestAs builds a /files request of sandbox id for path, as user.
func (a *Adapter) filesRequestAs(ctx context.Context, method, id, p, user string, body io.Reader) (*http.Request, error) {
	q := url.Values{"path": {p}, "username": {user}}
	req, err := http.NewRequestWithContext(ctx, method, a.envdBase(id)+"/files?"+q.Encode(), body)
	if err != nil {
		return nil, &paddock.InvalidError{Detail: "e2b: building a request: " + err.Error()}
	}
	envdHeaders{sandbox: id, user: a.cfg.User}.set(req.Header, false)
	return req, nil
}

// WriteFile streams r into path as a multipart upload (envd creates the
// parents), then sets mode's permission bits with chmod. Nothing is held
// whole in memory.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(p); err != nil {
		return err
	}
	id, err := a.running(ctx, h)
	if err != nil {
		return err
	}
	upload := httpx.NewMultipart("file", path.Base(p), r)
	req, err := a.filesRequest(ctx, http.MethodPost, id, p, upload.Body)
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
		return a.rest.StatusError(res.StatusCode, res.Header, body)
	}
	if mode.Perm() == 0o644 {
		return nil // what envd gives every file it writes
	}
	res2, err := a.Exec(ctx, h, paddock.NewCmd("chmod", strconv.FormatUint(uint64(mode.Perm()), 8), p), paddock.ExecOpts{})
	if err != nil {
		return err
	}
	if res2.ExitCode != 0 {
		return &paddock.UnavailableError{Detail: "e2b: chmod of the written file failed: " + string(res2.Stderr)}
	}
	return nil
}

// ReadFile streams the file at path; ErrNotFound when it is absent.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return nil, err
	}
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	req, err := a.filesRequest(ctx, http.MethodGet, id, p, nil)
	if err != nil {
		return nil, err
	}
	res, err := a.streaming.Do(req)
	if err != nil {
		return nil, httpx.Transport(err)
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
		if res.StatusCode == http.StatusBadRequest {
			return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a file", Status: res.StatusCode}
		}
		return nil, a.rest.StatusError(res.StatusCode, res.Header, body)
	}
	return res.Body, nil
}
