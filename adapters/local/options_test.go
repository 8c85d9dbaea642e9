package local_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
)

// option edits the configuration of an adapter under test.
type option = func(*local.Config)

// config is the configuration the options make.
func config(opts ...option) local.Config {
	var c local.Config
	for _, o := range opts {
		o(&c)
	}
	return c
}

func withRoot(dir string) option             { return func(c *local.Config) { c.Root = dir } }
func withIsolation(i local.Isolation) option { return func(c *local.Config) { c.Isolation = i } }
func withDrainLimit(d time.Duration) option  { return func(c *local.Config) { c.DrainLimit = d } }
func withExitGrace(d time.Duration) option   { return func(c *local.Config) { c.ExitGrace = &d } }
func withInitProgram(path string) option     { return func(c *local.Config) { c.InitProgram = path } }
func withMaxAge(d time.Duration) option      { return func(c *local.Config) { c.MaxAge = d } }
func withPreviewBaseURL(u string) option     { return func(c *local.Config) { c.PreviewBaseURL = u } }
func withProcessLimit(n int) option          { return func(c *local.Config) { c.ProcessLimit = n } }
func withFinishedSessions(n int) option      { return func(c *local.Config) { c.FinishedSessions = n } }
func withSessionOutputLimit(n int64) option {
	return func(c *local.Config) { c.SessionOutputLimit = n }
}
func withExecLimits(l paddock.ExecLimits) option {
	return func(c *local.Config) { c.Exec = l }
}

// isolationModes are the modes this host runs, as options.
func isolationModes(t testing.TB) map[string]option {
	modes := map[string]option{}
	for name, i := range localtest.Modes(t) {
		modes[name] = withIsolation(i)
	}
	return modes
}
