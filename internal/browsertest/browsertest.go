// Package browsertest starts a headless Chromium for a test: Debian's,
// with the flags this machine's closed network needs. Outside CI a
// machine without Chromium skips the test, saying so; under CI (which
// installs it) that is a failure.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium is the browser's path.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("Chromium is not installed; .ci/run installs Debian's chromium")
	}
	t.Skip("SKIPPED: no Chromium on this machine (apt-get install -y chromium); CI runs this test")
	return ""
}

// Tab starts a headless Chromium and returns its first tab; both end with
// the test. Its first action starts the browser: give that one no timeout
// (it would bound the browser's life), and the actions after it theirs.
func Tab(t testing.TB) context.Context {
	t.Helper()
	exe := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
		// Its singleton socket's directory goes under the test's own, as
		// the browser, ended with the test, removes none.
		chromedp.Env("TMPDIR="+t.TempDir()))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	return tab
}
