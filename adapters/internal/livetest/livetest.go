// Package livetest is what the hosted adapters' live tests share: the
// conformance suite's configuration against a real service, with sandbox
// names of their own per run.
package livetest

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// Config is the suite against a, with sandboxes named
// paddock-live-<run>-<n>, the load case sized by the environment variable
// turnsEnv (default turns), and the patience a real service needs.
func Config(a paddock.Adapter, turnsEnv string, turns int, spawn paddock.SpawnOpts) conformance.Config {
	if v, err := strconv.Atoi(os.Getenv(turnsEnv)); err == nil && v > 0 {
		turns = v
	}
	run := make([]byte, 3)
	_, _ = rand.Read(run)
	var n atomic.Int64
	return conformance.Config{
		Adapter:  a,
		Fixtures: conformance.ShellFixtures(),
		Name: func() string {
			return "paddock-live-" + hex.EncodeToString(run) + "-" + strconv.FormatInt(n.Add(1), 10)
		},
		SpawnOptions:     spawn,
		FrameTimeout:     60 * time.Second,
		OperationTimeout: 3 * time.Minute,
		Load:             conformance.Load{Turns: turns, Timeout: 15 * time.Minute},
	}
}

// Caller makes raw calls to a provider's API at base, authorised by the
// header name: value (what the tests use to make a sandbox outside
// Paddock). A call answers the status and the body; a transport failure
// fails the test.
func Caller(t testing.TB, base, name, value string) func(method, path, body string) (int, []byte) {
	return func(method, path, body string) (int, []byte) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(name, value)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, data
	}
}
