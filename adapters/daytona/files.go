package daytona

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// fileTransfer is WriteFile and ReadFile through the sandbox's toolbox: an upload
// to /files/upload (the daemon makes the parents), a download from
// /files/download (a directory is invalid).
type fileTransfer = httpx.Files

// openFiles finds the toolbox of h's sandbox for its file routes.
func (a *Adapter) openFiles(ctx context.Context, h paddock.Handle) (*httpx.REST, httpx.FileRequest, error) {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	return tb.rest, func(ctx context.Context, method, p string, body io.Reader) (*http.Request, error) {
		route := "/files/download"
		if method == http.MethodPost {
			route = "/files/upload"
		}
		return tb.rest.NewRequest(ctx, method, route, url.Values{"path": {p}}, body)
	}, nil
}
