package daytonatest

import (
	"net/http"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// Fault replaces the next answer of a route. Fail queues faults per route;
// each is used once, in order.
type Fault = stubserver.Fault

// PrivateDetail is the message of the default fault body.
const PrivateDetail = stubserver.PrivateDetail

// faultBody is Daytona's error body holding private detail, for a fault
// that sets no body.
func faultBody(r *http.Request, status int) string {
	return `{"path":"` + r.URL.Path + `","timestamp":"` + time.Now().UTC().Format(time.RFC3339) + `","statusCode":` +
		strconv.Itoa(status) + `,"error":"` + http.StatusText(status) + `","message":"` + PrivateDetail + `"}`
}

// Status returns a fault answering status with Daytona's error body
// holding private detail.
func Status(status int) Fault { return Fault{Status: status} }

// Body returns a fault answering status with exactly body ("" is an empty
// body).
func Body(status int, body string) Fault { return Fault{Status: status, Body: body, Empty: body == ""} }

// RateLimited returns the throttler's 429: its body, and the hint in the
// per-throttler header Retry-After-sandbox-create, as Daytona's API sends
// it (seconds < 0: no hint).
func RateLimited(retryAfterSeconds int) Fault {
	f := Fault{Status: http.StatusTooManyRequests,
		Body: `{"statusCode":429,"error":"Too Many Requests","message":"ThrottlerException: Too Many Requests"}`}
	if retryAfterSeconds >= 0 {
		f.Header = http.Header{"Retry-After-Sandbox-Create": {strconv.Itoa(retryAfterSeconds)},
			"X-Ratelimit-Limit-Sandbox-Create": {"100"}, "X-Ratelimit-Remaining-Sandbox-Create": {"0"}}
	}
	return f
}

// Reset returns a fault that drops the connection with no answer.
func Reset() Fault { return Fault{Reset: true} }
