//go:build unix

package local_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// leaseRootEnv carries the adapter's root to RunLeases' child processes.
const leaseRootEnv = "PADDOCK_LOCAL_LEASE_ROOT"

func TestLeases(t *testing.T) {
	t.Parallel()
	root := os.Getenv(leaseRootEnv)
	if root == "" {
		root = t.TempDir()
	}
	conformance.RunLeases(t, conformance.LeaseSetup{
		ChildEnv: []string{leaseRootEnv + "=" + root},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := local.New(config(withRoot(root)))
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Close() })
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			dir := filepath.Join(root, name)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "fs"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not Paddock's"), 0o644))
			return func() bool {
				_, err := os.Stat(filepath.Join(dir, "notes.txt"))
				return err == nil
			}
		},
	})
}

func TestReapPastMaxAge(t *testing.T) {
	t.Parallel()
	a, err := local.New(config(withRoot(t.TempDir()), withMaxAge(time.Second)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	conformance.RunMaxAge(t, a, time.Second)
}
