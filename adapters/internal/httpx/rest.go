package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
)

// REST is one provider's ordinary JSON API: it builds authorised requests,
// makes calls whose answers are read whole under a byte bound, normalises
// failures, and logs each call at debug level without its headers (so no
// credential is ever logged).
type REST struct {
	Provider paddock.Provider
	BaseURL  string
	// Authorize sets the request's credential, or answers why there is
	// none (a missing key is denied before anything is sent).
	Authorize func(*http.Request) error
	// MaxBody bounds an answer's body; a larger one is the provider's
	// error.
	MaxBody int64
	// RetryField names the JSON field of a 429 body holding the retry
	// hint in seconds ("" = the Retry-After header only).
	RetryField string
	Log        zerolog.Logger
}

// NewRequest builds an authorised request to path (already escaped).
func (r *REST) NewRequest(ctx context.Context, method, path string, query url.Values, body io.Reader) (*http.Request, error) {
	u := strings.TrimRight(r.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, &paddock.InvalidError{Detail: string(r.Provider) + ": building a request: " + err.Error()}
	}
	if err := r.Authorize(req); err != nil {
		return nil, err
	}
	return req, nil
}

// Call is one call: JSON in (when body is not nil), the status, headers
// and body out. A transport failure is an error; an HTTP status is for the
// caller to judge.
func (r *REST) Call(ctx context.Context, client *http.Client, method, path string, query url.Values, body any) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, &paddock.InvalidError{Detail: err.Error()}
		}
		rd = bytes.NewReader(b)
	}
	req, err := r.NewRequest(ctx, method, path, query, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		err = Transport(err)
		r.LogCall(method, path, 0, start, err)
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, r.MaxBody+1))
	switch {
	case err != nil:
		err = Transport(err)
	case int64(len(data)) > r.MaxBody:
		err = &paddock.ProviderError{Provider: r.Provider, Detail: fmt.Sprintf("an answer larger than %d bytes", r.MaxBody)}
	}
	if err != nil {
		r.LogCall(method, path, res.StatusCode, start, err)
		return 0, nil, nil, err
	}
	r.LogCall(method, path, res.StatusCode, start, nil)
	return res.StatusCode, res.Header, data, nil
}

// JSON is Call for an answer that must be 2xx and decodes into out (nil:
// not read).
func (r *REST) JSON(ctx context.Context, client *http.Client, method, path string, query url.Values, body, out any) error {
	status, header, data, err := r.Call(ctx, client, method, path, query, body)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return r.StatusError(status, header, data)
	}
	return r.Decode(data, out)
}

// Unless is Found for a change that no longer matters once its thing is
// gone (a lease on a deleted sandbox): a 404 is nil.
func (r *REST) Unless(ctx context.Context, client *http.Client, method, path string, query url.Values, body any) error {
	if err := r.Found(ctx, client, method, path, query, body, nil); !errors.Is(err, paddock.ErrNotFound) {
		return err
	}
	return nil
}

// Found is JSON for a call about one thing that may not exist: a 404 is
// paddock.ErrNotFound.
func (r *REST) Found(ctx context.Context, client *http.Client, method, path string, query url.Values, body, out any) error {
	status, header, data, err := r.Call(ctx, client, method, path, query, body)
	switch {
	case err != nil:
		return err
	case status == http.StatusNotFound:
		return paddock.ErrNotFound
	case status < 200 || status > 299:
		return r.StatusError(status, header, data)
	}
	return r.Decode(data, out)
}

// Decode reads a JSON answer into out (nil: nothing to read); a malformed
// answer is the provider's error.
func (r *REST) Decode(data []byte, out any) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &paddock.ProviderError{Provider: r.Provider, Detail: "malformed answer: " + err.Error()}
	}
	return nil
}

// StatusError normalises a non-success answer (see Status).
func (r *REST) StatusError(status int, header http.Header, body []byte) error {
	return Status(status, body, header, r.RetryField)
}

// LogCall records one call at debug level: what was asked, the status,
// how long it took. Headers are never logged.
func (r *REST) LogCall(method, path string, status int, start time.Time, err error) {
	ev := r.Log.Debug().Str("provider", string(r.Provider)).Str("method", method).
		Str("path", path).Int("status", status).Dur("took", time.Since(start))
	if err != nil {
		ev = ev.Str("error", err.Error())
	}
	ev.Msg(string(r.Provider) + " request")
}

// Escape percent-encodes a path segment, keeping only RFC 3986 unreserved
// characters.
func Escape(s string) string {
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

// Expect is Call for an answer whose body does not matter: a status of
// accepted is success, any other is normalised to an error.
func (r *REST) Expect(ctx context.Context, client *http.Client, method, path string, body any, accepted ...int) error {
	status, header, data, err := r.Call(ctx, client, method, path, nil, body)
	if err != nil {
		return err
	}
	for _, ok := range accepted {
		if status == ok {
			return nil
		}
	}
	return r.StatusError(status, header, data)
}
