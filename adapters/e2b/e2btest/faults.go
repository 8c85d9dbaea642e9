package e2btest

import (
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// Fault replaces the next answer of a route. Fail queues faults per route;
// each is used once, in order.
type Fault = stubserver.Fault

// PrivateDetail is the message of the default fault body.
const PrivateDetail = stubserver.PrivateDetail

// faultBody is E2B's error body holding private detail, for a fault that
// sets no body.
func faultBody(_ *http.Request, status int) string {
	return `{"code":` + strconv.Itoa(status) + `,"message":"` + PrivateDetail + `"}`
}

// Status returns a fault answering status with E2B's error body holding
// private detail.
func Status(status int) Fault { return Fault{Status: status} }

// Body returns a fault answering status with exactly body ("" is an empty
// body).
func Body(status int, body string) Fault { return Fault{Status: status, Body: body, Empty: body == ""} }

// RateLimited returns E2B's middleware 429: its body, and the hint in the
// Retry-After header (E2B puts none in the body).
func RateLimited(retryAfterSeconds int) Fault {
	return Fault{Status: http.StatusTooManyRequests, Body: `{"code":429,"message":"Rate limit exceeded"}`,
		Header: http.Header{"Retry-After": {strconv.Itoa(retryAfterSeconds)}}}
}

// ConcurrencyLimited returns the 429 of a create at the team's sandbox
// limit: no Retry-After.
func ConcurrencyLimited() Fault {
	return Fault{Status: http.StatusTooManyRequests,
		Body: `{"code":429,"message":"you have reached the maximum number of concurrent E2B sandboxes (20)"}`}
}

// Reset returns a fault that drops the connection with no answer.
func Reset() Fault { return Fault{Reset: true} }

// Stream returns a fault answering an envd stream call with exactly these
// envelopes (HTTP 200, application/connect+json), then a clean close, for
// answers a healthy envd never gives.
func Stream(envelopes ...string) Fault {
	return Fault{Status: http.StatusOK, Body: strings.Join(envelopes, ""), Empty: len(envelopes) == 0,
		Header: http.Header{"Content-Type": {"application/connect+json"}}}
}

// Cut makes a stream fault end the connection mid-body (a reset).
func Cut(f Fault) Fault {
	f.DeclaredLength = len(f.Body) + 1<<10
	return f
}

// Silent makes a stream fault stay open, silent, after its envelopes.
func Silent(f Fault) Fault {
	f = Cut(f)
	f.Stall = true
	return f
}

// Envelope is one Connect envelope: the flags byte, a big-endian length
// (which may lie about the payload), the payload.
func Envelope(flags byte, length uint32, payload string) string {
	var head [5]byte
	head[0] = flags
	binary.BigEndian.PutUint32(head[1:], length)
	return string(head[:]) + payload
}

// Message is a data envelope carrying one JSON message.
func Message(json string) string { return Envelope(0, uint32(len(json)), json) }

// EndStream is the end-of-stream envelope carrying json ("{}" is a clean
// end, {"error":{"code":…,"message":…}} a failed one).
func EndStream(json string) string { return Envelope(2, uint32(len(json)), json) }

// Split returns a stream fault writing these pieces one by one, each
// flushed on its own: envelopes split anywhere, several in one write, a
// head of fewer than five bytes.
func Split(pieces ...string) Fault {
	return Fault{Status: http.StatusOK, Pieces: pieces, Empty: true,
		Header: http.Header{"Content-Type": {"application/connect+json"}}}
}
