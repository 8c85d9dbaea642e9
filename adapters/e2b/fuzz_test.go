package e2b_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
)

// FuzzParseExit: a journal's exit record is a code in 0..255 or nothing,
// whatever the file holds, and every code reads back from its record.
func FuzzParseExit(f *testing.F) {
	for _, s := range []string{"17\n", "0\n", "255\n", "bad\n", "", "7", " 3\n", "-1\n", "1e3\n", "\xff\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		code, ok := e2b.ParseExit(b)
		if !ok {
			return
		}
		if code < 0 || code > 255 {
			t.Fatalf("code %d from %q", code, b)
		}
		back, ok := e2b.ParseExit([]byte(strconv.Itoa(code) + "\n"))
		if !ok || back != code {
			t.Fatalf("the record of %d reads back as %d, %v", code, back, ok)
		}
	})
}

// FuzzProcessStream: whatever bytes envd's process stream carries, Exec
// answers (never hangs, never panics) with an exit or an error of the
// taxonomy, and never more output than the body held.
func FuzzProcessStream(f *testing.F) {
	for _, seed := range [][]string{
		{started, he, llo, dropped, exit3, clean},
		{started, he, clean},
		{started, he},
		{clean},
		{started, e2btest.EndStream(`{"error":{"code":"unavailable","message":"gone"}}`)},
		{started, e2btest.Envelope(0, 4096, `{"event":{}}`)},
		{started, e2btest.Envelope(0x40, 2, `{}`), clean},
		{started, e2btest.Message(`{"event":{"data":{"stderr":"%%%"}}}`), exit0, clean},
		{started, e2btest.Message(`{"event":{"end":{"status":"signal: killed"}}}`), clean},
		{started, exit3, late, exit0, clean},
	} {
		f.Add([]byte(strings.Join(seed, "")))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a := build(t, e2b.Config{APIKey: paddock.NewSecret("e2b_fuzz"), BaseURL: "http://control.invalid", EnvdURL: "http://envd.invalid",
			Transport: cannedEnvd(body)})
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := a.Exec(c, a.BuildHandle("box"), paddock.NewCmd("true"), paddock.ExecOpts{})
		if c.Err() != nil {
			t.Fatalf("Exec did not answer within 10s: %v", err)
		}
		if err != nil {
			if paddock.KindOf(err) == "" {
				t.Fatalf("an error outside the taxonomy: %v", err)
			}
			return
		}
		if n := len(res.Stdout) + len(res.Stderr); n > len(body) {
			t.Fatalf("%d bytes of output from a %d-byte body", n, len(body))
		}
	})
}

// cannedEnvd answers the sandbox lookup with one running sandbox, every
// process start with body, and any other envd call with {}.
func cannedEnvd(body []byte) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		answer := func(status int, contentType, b string) *http.Response {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}},
				Body: io.NopCloser(strings.NewReader(b)), Request: r}
		}
		switch {
		case r.URL.Path == "/v2/sandboxes":
			return answer(http.StatusOK, "application/json", `[{"sandboxID":"ifuzz","state":"running","metadata":{"paddock_name":"box","paddock":"1"}}]`), nil
		case strings.HasSuffix(r.URL.Path, "/Start"):
			return answer(http.StatusOK, "application/connect+json", string(body)), nil
		}
		return answer(http.StatusOK, "application/json", `{}`), nil
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
