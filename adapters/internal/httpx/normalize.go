package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
)

// maxDetail bounds the provider text an error carries.
const maxDetail = 200

// Status maps an HTTP answer to the taxonomy: 404 not_found; 401 and 403
// denied; 429 rate_limited with the retry hint (the body field named
// retryField, else the Retry-After header); 5xx unavailable; every other
// status (3xx included) invalid. body may be nil: the bounded operations
// pass none, so no provider prose reaches an error.
func Status(status int, body []byte, header http.Header, retryField string) error {
	detail := bodyDetail(body)
	switch {
	case status == http.StatusNotFound:
		return paddock.ErrNotFound
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &paddock.DeniedError{Detail: detail, Status: status}
	case status == http.StatusTooManyRequests:
		return &paddock.RateLimitedError{RetryAfter: retryAfter(body, header, retryField)}
	case status >= 500:
		return &paddock.UnavailableError{Detail: detail, Status: status}
	}
	return &paddock.InvalidError{Detail: detail, Status: status}
}

// bodyDetail extracts a short message from a JSON error body: "error",
// "message", or the first of "errors".
func bodyDetail(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	var b struct {
		Error   any      `json:"error"`
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	msg := ""
	if err := json.Unmarshal(body, &b); err == nil {
		switch {
		case b.Message != "":
			msg = b.Message
		case b.Error != nil:
			msg = fmt.Sprint(b.Error)
		case len(b.Errors) > 0:
			msg = b.Errors[0]
		}
	}
	msg = strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, msg)
	if len(msg) > maxDetail {
		msg = msg[:maxDetail] + "..."
	}
	return msg
}

// retryAfter reads a non-negative whole number of seconds from the body's
// field, else from the Retry-After header, else the longest of the
// per-throttler Retry-After-<name> headers; nil when there is none.
func retryAfter(body []byte, header http.Header, field string) *time.Duration {
	if field != "" && len(body) > 0 {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			if v, ok := m[field].(float64); ok && v >= 0 && v == float64(int64(v)) {
				d := time.Duration(v) * time.Second
				return &d
			}
		}
	}
	if header == nil {
		return nil
	}
	if d := seconds(header.Get("Retry-After")); d != nil {
		return d
	}
	// Per-throttler hints (Retry-After-<name>, as Daytona's API sends):
	// the longest wait is the one that lets every throttler pass.
	var longest *time.Duration
	for k, vs := range header {
		if len(vs) == 0 || !strings.HasPrefix(strings.ToLower(k), "retry-after-") {
			continue
		}
		if d := seconds(vs[0]); d != nil && (longest == nil || *d > *longest) {
			longest = d
		}
	}
	return longest
}

// seconds reads a non-negative whole number of seconds, or nil.
func seconds(v string) *time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return nil
	}
	d := time.Duration(n) * time.Second
	return &d
}

// Transport maps a failure to reach the provider (no HTTP answer): a
// timeout is unavailable(timeout), anything else unavailable(exception).
// The text never carries a request header, so no credential leaks.
func Transport(err error) error {
	if err == nil {
		return nil
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &paddock.UnavailableError{Detail: paddock.DetailTimeout}
	}
	return &paddock.UnavailableError{Detail: paddock.DetailException + ": " + scrub(err.Error())}
}

// scrub keeps an error's text short.
func scrub(s string) string {
	if len(s) > maxDetail {
		return s[:maxDetail] + "..."
	}
	return s
}
