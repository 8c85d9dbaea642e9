package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStatus(t *testing.T) {
	secs := func(n int) *time.Duration { d := time.Duration(n) * time.Second; return &d }
	cases := []struct {
		name   string
		status int
		body   string
		header http.Header
		kind   error
		detail string
		retry  *time.Duration
	}{
		{"404", 404, `{"error":"sprite not found"}`, nil, paddock.ErrNotFound, "", nil},
		{"401", 401, `{"error":"authentication failed"}`, nil, paddock.ErrDenied, "authentication failed", nil},
		{"403", 403, ``, nil, paddock.ErrDenied, "", nil},
		{"429 body hint", 429, `{"retry_after_seconds":7}`, http.Header{"Retry-After": {"3"}}, paddock.ErrRateLimited, "", secs(7)},
		{"429 header hint", 429, `{"error":"x"}`, http.Header{"Retry-After": {"3"}}, paddock.ErrRateLimited, "", secs(3)},
		{"429 fractional body hint falls back", 429, `{"retry_after_seconds":1.5}`, http.Header{"Retry-After": {"2"}}, paddock.ErrRateLimited, "", secs(2)},
		{"429 negative hints", 429, `{"retry_after_seconds":-1}`, http.Header{"Retry-After": {"-4"}}, paddock.ErrRateLimited, "", nil},
		{"429 per-throttler hints: the longest", 429, `{}`, http.Header{"Retry-After-Sandbox-Create": {"9"}, "Retry-After-Authenticated": {"4"}, "Retry-After-Bad": {"x"}}, paddock.ErrRateLimited, "", secs(9)},
		{"429 a plain hint wins", 429, `{}`, http.Header{"Retry-After": {"2"}, "Retry-After-Sandbox-Create": {"9"}}, paddock.ErrRateLimited, "", secs(2)},
		{"429 date header is no hint", 429, ``, http.Header{"Retry-After": {"Wed, 21 Oct 2026 07:28:00 GMT"}}, paddock.ErrRateLimited, "", nil},
		{"500", 500, `{"message":"boom"}`, nil, paddock.ErrUnavailable, "boom", nil},
		{"503 without a body", 503, ``, nil, paddock.ErrUnavailable, "", nil},
		{"302", 302, ``, nil, paddock.ErrInvalid, "", nil},
		{"400 errors list", 400, `{"errors":["invalid sprite name format"]}`, nil, paddock.ErrInvalid, "invalid sprite name format", nil},
		{"409", 409, `{"error":"exists"}`, nil, paddock.ErrInvalid, "exists", nil},
		{"detail is one short line", 400, `{"error":"a\nb` + strings.Repeat("x", 300) + `"}`, nil, paddock.ErrInvalid, "a b" + strings.Repeat("x", 197) + "...", nil},
		{"not JSON gives no detail", 500, `<html>`, nil, paddock.ErrUnavailable, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Status(c.status, []byte(c.body), c.header, "retry_after_seconds")
			require.ErrorIs(t, err, c.kind)
			var (
				u  *paddock.UnavailableError
				iv *paddock.InvalidError
				d  *paddock.DeniedError
				rl *paddock.RateLimitedError
			)
			switch {
			case errors.As(err, &u):
				require.Equal(t, c.detail, u.Detail)
				require.Equal(t, c.status, u.Status)
			case errors.As(err, &iv):
				require.Equal(t, c.detail, iv.Detail)
				require.Equal(t, c.status, iv.Status)
			case errors.As(err, &d):
				require.Equal(t, c.detail, d.Detail)
			case errors.As(err, &rl):
				require.Equal(t, c.retry, rl.RetryAfter)
			}
		})
	}
	require.ErrorIs(t, Status(503, nil, nil, ""), paddock.ErrUnavailable, "no body, no header: the status alone")
}

func response(contentLength int64, body string) *http.Response {
	return &http.Response{ContentLength: contentLength, Body: io.NopCloser(strings.NewReader(body))}
}

func TestBudget(t *testing.T) {
	cases := []struct {
		name   string
		left   int64
		length int64
		body   string
		err    error
	}{
		{"within", 10, 5, "hello", nil},
		{"exactly the budget", 5, 5, "hello", nil},
		{"declared over the budget", 4, 5, "hello", ErrBudget},
		{"unknown length over the budget", 4, -1, "hello", ErrBudget},
		{"unknown length within", 10, -1, "hello", nil},
		{"cut short", 100, 10, "hello", io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBudget(c.left)
			data, err := b.Read(response(c.length, c.body))
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.body, string(data))
		})
	}
	t.Run("shared by two answers", func(t *testing.T) {
		b := NewBudget(8)
		_, err := b.Read(response(5, "hello"))
		require.NoError(t, err)
		_, err = b.Read(response(4, "more"))
		require.ErrorIs(t, err, ErrBudget, "3 bytes were left")
	})
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func TestTransport(t *testing.T) {
	require.NoError(t, Transport(nil))
	for _, err := range []error{context.DeadlineExceeded, fmt.Errorf("get: %w", timeoutErr{})} {
		got := Transport(err)
		var u *paddock.UnavailableError
		require.ErrorAs(t, got, &u)
		require.Equal(t, paddock.DetailTimeout, u.Detail)
	}
	got := Transport(errors.New("connection refused " + strings.Repeat("z", 400)))
	var u *paddock.UnavailableError
	require.ErrorAs(t, got, &u)
	require.True(t, strings.HasPrefix(u.Detail, paddock.DetailException+": connection refused"))
	require.LessOrEqual(t, len(u.Detail), len(paddock.DetailException)+2+maxDetail+3)
}

func TestNoRedirects(t *testing.T) {
	client := &http.Client{CheckRedirect: NoRedirects, Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 302, Header: http.Header{"Location": {"https://elsewhere.invalid/"}},
			ContentLength: 2, Body: io.NopCloser(strings.NewReader("no")), Request: r}, nil
	})}
	res, err := client.Get("http://example.invalid/")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 302, res.StatusCode, "the redirect is returned, not followed")
	body, err := NewBudget(10).Read(res)
	require.NoError(t, err)
	require.Equal(t, "no", string(body))
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A multipart body streams the reader as one file part; Done ends the
// copy even when the body was never read, and the reader is not read after.
func TestMultipart(t *testing.T) {
	t.Parallel()
	m := NewMultipart("file", "f.txt", strings.NewReader("payload"))
	_, params, err := mime.ParseMediaType(m.ContentType)
	require.NoError(t, err)
	mr := multipart.NewReader(m.Body, params["boundary"])
	part, err := mr.NextPart()
	require.NoError(t, err)
	assert.Equal(t, "file", part.FormName())
	assert.Equal(t, "f.txt", part.FileName())
	data, err := io.ReadAll(part)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(data))
	m.Done()

	unread := NewMultipart("file", "g", strings.NewReader(strings.Repeat("x", 1<<20)))
	unread.Done() // returns: the copy stops at its next write
}

// TestRESTOutcomes proves how each call judges a status: JSON wants 2xx,
// Found turns a 404 into ErrNotFound, Unless turns it into nil, and every
// other failure stays typed for all three.
func TestRESTOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status            int
		json, found, gone error
	}{
		{http.StatusOK, nil, nil, nil},
		{http.StatusNoContent, nil, nil, nil},
		{http.StatusNotFound, paddock.ErrNotFound, paddock.ErrNotFound, nil},
		{http.StatusUnauthorized, paddock.ErrDenied, paddock.ErrDenied, paddock.ErrDenied},
		{http.StatusInternalServerError, paddock.ErrUnavailable, paddock.ErrUnavailable, paddock.ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			t.Parallel()
			var calls int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				assert.Equal(t, http.MethodPut, r.Method)
				assert.Equal(t, "/things/a", r.URL.Path)
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			r := &REST{Provider: "test", BaseURL: srv.URL, MaxBody: 1 << 10, Authorize: func(*http.Request) error { return nil }}
			ctx := context.Background()
			check := func(want, got error) {
				if want == nil {
					assert.NoError(t, got)
					return
				}
				assert.ErrorIs(t, got, want)
			}
			check(tc.json, r.JSON(ctx, srv.Client(), http.MethodPut, "/things/a", nil, map[string]int{"n": 1}, nil))
			check(tc.found, r.Found(ctx, srv.Client(), http.MethodPut, "/things/a", nil, nil, nil))
			check(tc.gone, r.Unless(ctx, srv.Client(), http.MethodPut, "/things/a", nil, nil))
			assert.Equal(t, 3, calls)
		})
	}
}
