package sprites

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// errNoToken is the answer of every call without a configured token.
var errNoToken = &paddock.DeniedError{Detail: "sprites: no token configured"}

// escape percent-encodes a path segment, keeping only RFC 3986 unreserved
// characters.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// spritePath is /v1/sprites/<name> plus more segments, all escaped.
func spritePath(name string, more ...string) string {
	p := "/v1/sprites/" + escape(name)
	for _, m := range more {
		p += "/" + m
	}
	return p
}

// newRequest builds an authorised request to path (already escaped).
func (a *Adapter) newRequest(ctx context.Context, method, path string, query url.Values, body io.Reader) (*http.Request, error) {
	if a.cfg.Token.IsZero() {
		return nil, errNoToken
	}
	u := strings.TrimRight(a.cfg.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, &paddock.InvalidError{Detail: "sprites: building a request: " + err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.Token.Reveal())
	return req, nil
}

// call is one ordinary REST call: JSON in (when body is not nil), the
// status and body out. A transport failure is an error; an HTTP status is
// for the caller to judge.
func (a *Adapter) call(ctx context.Context, client *http.Client, method, path string, query url.Values, body any) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, &paddock.InvalidError{Detail: err.Error()}
		}
		rd = bytes.NewReader(b)
	}
	req, err := a.newRequest(ctx, method, path, query, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		err = httpx.Transport(err)
		a.logRequest(method, path, 0, start, err)
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		err = httpx.Transport(err)
		a.logRequest(method, path, res.StatusCode, start, err)
		return 0, nil, nil, err
	}
	a.logRequest(method, path, res.StatusCode, start, nil)
	return res.StatusCode, res.Header, data, nil
}

// logRequest records one request at debug level: what was asked, the
// status, how long it took. Headers (and so the token) are never logged.
func (a *Adapter) logRequest(method, path string, status int, start time.Time, err error) {
	ev := a.log.Debug().Str("provider", string(paddock.ProviderSprites)).Str("method", method).
		Str("path", path).Int("status", status).Dur("took", time.Since(start))
	if err != nil {
		ev = ev.Str("error", err.Error())
	}
	ev.Msg("sprites request")
}

// statusError normalises a non-success answer.
func statusError(status int, header http.Header, body []byte) error {
	return httpx.Status(status, body, header, retryField)
}

// jsonCall is call for an answer that must be 2xx and decodes into out.
func (a *Adapter) jsonCall(ctx context.Context, method, path string, query url.Values, body, out any) error {
	status, header, data, err := a.call(ctx, a.client, method, path, query, body)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return statusError(status, header, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "malformed answer: " + err.Error()}
	}
	return nil
}
