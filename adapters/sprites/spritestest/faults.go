package spritestest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// Fault replaces the next answer of a route. Fail queues faults per route;
// each is used once, in order.
type Fault = stubserver.Fault

// PrivateDetail is the text of the default fault body.
const PrivateDetail = stubserver.PrivateDetail

// faultBody is Sprites' error body holding private detail, for a fault
// that sets no body.
func faultBody(*http.Request, int) string { return `{"error":"` + PrivateDetail + `"}` }

func contentType(body string) string {
	if strings.Contains(body, "\n{") || strings.HasPrefix(body, `{"type"`) {
		return "application/x-ndjson"
	}
	return "application/json; charset=utf-8"
}

// Status returns a fault answering status with the default private body.
func Status(status int) Fault { return Fault{Status: status} }

// Body returns a fault answering status with exactly body ("" is an empty
// body).
func Body(status int, body string) Fault { return Fault{Status: status, Body: body, Empty: body == ""} }

// Redirect returns a 302 to elsewhere (which must not be followed).
func Redirect() Fault {
	return Fault{Status: http.StatusFound, Header: http.Header{"Location": {"https://elsewhere.invalid/"}}}
}

// RateLimited returns a 429 with the retry hint in the body and the
// headers, as Sprites sends it.
func RateLimited(retryAfterSeconds int) Fault {
	n := strconv.Itoa(retryAfterSeconds)
	return Fault{
		Status: http.StatusTooManyRequests,
		Body: `{"error":"sprite_creation_rate_limited","message":"too many sprites created","limit":10,` +
			`"window_seconds":60,"retry_after_seconds":` + n + `,"current_count":10}`,
		Header: http.Header{"Retry-After": {n}, "X-RateLimit-Limit": {"10"}, "X-RateLimit-Remaining": {"0"},
			"X-RateLimit-Reset": {strconv.FormatInt(time.Now().Add(time.Duration(retryAfterSeconds)*time.Second).Unix(), 10)}},
	}
}

// Stall returns a fault that answers nothing until the client gives up.
func Stall() Fault { return Fault{Delay: 10 * time.Minute} }
