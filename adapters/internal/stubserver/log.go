package stubserver

import (
	"net/http"
	"sync"
)

// Request is one request a loopback server received.
type Request struct {
	Route   string // the matched pattern, e.g. "POST /sandboxes"
	Method  string
	Path    string // decoded
	RawPath string // as sent, percent-encoded
	Query   string
	Body    string
	Header  http.Header
	// ClientGone: the client closed the connection while a fault stalled
	// the answer.
	ClientGone bool
}

// Log records a server's requests, in order; safe for concurrent use.
type Log struct {
	mu       sync.Mutex
	reqs     []Request
	inFlight map[string]int // requests of a route being answered now
	most     map[string]int // the most of a route ever answered at once
}

// Begin counts a request of route as being answered until the returned
// function is called.
func (l *Log) Begin(route string) (end func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight == nil {
		l.inFlight, l.most = map[string]int{}, map[string]int{}
	}
	l.inFlight[route]++
	l.most[route] = max(l.most[route], l.inFlight[route])
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.inFlight[route]--
		})
	}
}

// InFlight is how many requests of route the server is answering now.
func (l *Log) InFlight(route string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight[route]
}

// MostInFlight is the most requests of route the server answered at once.
func (l *Log) MostInFlight(route string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.most[route]
}

// Record adds r, matched as route, with its body, and answers its index.
func (l *Log) Record(route string, r *http.Request, body []byte) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, Request{Route: route, Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(),
		Query: r.URL.RawQuery, Body: string(body), Header: r.Header.Clone()})
	return len(l.reqs) - 1
}

// Gone marks request i as one whose client left while it was answered.
func (l *Log) Gone(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs[i].ClientGone = true
}

// All returns every request so far, in order.
func (l *Log) All() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.reqs...)
}

// Count returns how many requests matched route.
func (l *Log) Count(route string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if r.Route == route {
			n++
		}
	}
	return n
}
