// Package secretscan is for adapter test suites: a Capture collects every
// log line and the printed forms of every error a run produces, so the
// suite's TestMain can prove that no registered secret reached any of them.
package secretscan

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// Capture is safe for concurrent use; the zero value is not usable, call
// New.
type Capture struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	secrets map[string]bool
}

// New returns an empty capture.
func New() *Capture { return &Capture{secrets: map[string]bool{}} }

// Write appends p to the captured text.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// Secret registers a secret the run must never show, and returns it.
func (c *Capture) Secret(s string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.secrets[s] = true
	return s
}

// Err records an error's every printed form (nil is ignored).
func (c *Capture) Err(err error) {
	if err != nil {
		fmt.Fprintf(c, "error: %v | %+v | %#v\n", err, err, err)
	}
}

// Logger logs everything, at debug level, into the capture.
func (c *Capture) Logger() zerolog.Logger { return zerolog.New(c).Level(zerolog.DebugLevel) }

// Leaks counts the registered secrets found in the captured text.
func (c *Capture) Leaks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	text := c.buf.String()
	for s := range c.secrets {
		if strings.Contains(text, s) {
			n++
		}
	}
	return n
}

// Lines is how many lines were captured.
func (c *Capture) Lines() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Count(c.buf.Bytes(), []byte("\n"))
}

// Main runs a package's tests, then fails the run when a registered
// secret appeared in the capture or a goroutine leaked; call it from
// TestMain. what names the secrets in the message ("API key").
func (c *Capture) Main(m *testing.M, what string) {
	code := m.Run()
	if n := c.Leaks(); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d %s(s) appeared in the captured logs and errors\n", n, what)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: leaked goroutines: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
