// Package heavy keeps the tests that saturate the machine on purpose (load
// cases, gigabyte streams, thousands of commands at once) from running at
// the same time as each other, whichever test binaries they are in: each
// holds the machine's one heavy lock, a file in the temporary directory,
// while it runs. go test runs several packages' binaries at once, and two
// such tests side by side starve each other into failures that say nothing
// about the code.
package heavy

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FileName is the lock file's name in os.TempDir().
const FileName = "paddock-heavy.lock"

// Lock blocks until tb holds the machine's heavy lock and releases it when
// tb and its subtests end. It logs how long it waited, when it waited a
// second or more. A test that cannot take the lock fails.
func Lock(tb testing.TB) {
	tb.Helper()
	lockAt(tb, filepath.Join(os.TempDir(), FileName))
}

// lockAt is Lock on the lock file at path.
func lockAt(tb testing.TB, path string) {
	tb.Helper()
	start := time.Now()
	f, err := acquire(path)
	if err != nil {
		tb.Fatalf("heavy: taking the lock %s: %v", path, err)
	}
	if waited := time.Since(start); waited >= time.Second {
		tb.Logf("heavy: waited %s for the other heavy tests on this machine", waited.Round(time.Second))
	}
	tb.Cleanup(func() { _ = f.Close() }) // closing the file releases the lock
}

// acquire opens the lock file at path and waits for its exclusive lock;
// closing the file releases it.
func acquire(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Volume is how much of its full size a volume test (one that moves
// gigabytes) moves: all of it, or an eighth built with the race detector.
// The detector's cost is per byte that instrumented code copies, while the
// interleavings it checks come from concurrency, not volume; so the race
// build checks the same paths on less data, and CI runs the volume tests
// at full size without it. Name such tests TestVolume..., so CI finds them.
func Volume(full int) int {
	if Race {
		return max(full/8, 1)
	}
	return full
}
