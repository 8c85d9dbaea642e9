package sprites_test

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

// captured holds every log line of every adapter the tests build, and the
// text of every error they inspect, so TestMain can prove that no token
// reached any of them.
var captured = &capture{tokens: map[string]bool{}}

type capture struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	tokens map[string]bool
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// token registers a token the run must never show.
func (c *capture) token(tok string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens[tok] = true
	return tok
}

// err records an error's every printed form.
func (c *capture) err(err error) {
	if err != nil {
		fmt.Fprintf(c, "error: %v | %+v | %#v\n", err, err, err)
	}
}

// leaks lists the tokens found in the captured text.
func (c *capture) leaks() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found []string
	for tok := range c.tokens {
		if strings.Contains(c.buf.String(), tok) {
			found = append(found, tok)
		}
	}
	return found
}

func (c *capture) lines() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Count(c.buf.Bytes(), []byte("\n"))
}

// testLogger logs everything, at debug level, into the capture.
func testLogger() zerolog.Logger { return zerolog.New(captured).Level(zerolog.DebugLevel) }

func TestMain(m *testing.M) {
	code := m.Run()
	if leaks := captured.leaks(); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d token(s) appeared in the captured logs and errors\n", len(leaks))
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
