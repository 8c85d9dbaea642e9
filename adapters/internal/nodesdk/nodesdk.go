// Package nodesdk runs a provider's official JavaScript SDK against a
// loopback server in a test: a script in a testdata directory whose
// dependencies `npm ci` installed, printing "ok <step>" per step and
// "FAIL <step>: …" on the first failure.
package nodesdk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Run runs node script in dir with env added and requires every step to
// pass (last is the final step's name). Without node or the module (a
// path under node_modules) it skips, or fails under CI, which installs
// both.
func Run(t testing.TB, dir, module, script, last string, env ...string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(abs, "node_modules", module))
	if err != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node (%v) or %s (%v) is missing: run npm ci in %s", err, module, modErr, abs)
		}
		t.Skipf("the official SDK test needs node and `npm ci` in %s", abs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("the SDK's run:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK's run failed: %v", err)
	}
	text := string(out)
	if strings.Contains(text, "FAIL") || !strings.Contains(text, "ok "+last+"\n") ||
		strings.Count(text, "ok ") != strings.Count(text, "\n") {
		t.Fatalf("not every step passed")
	}
}
