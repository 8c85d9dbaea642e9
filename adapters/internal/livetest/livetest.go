// Package livetest is what the hosted adapters' live tests share: the
// conformance suite's configuration against a real service, with sandbox
// names of their own per run.
package livetest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/conformance"
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
