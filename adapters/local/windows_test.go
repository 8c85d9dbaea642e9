//go:build windows

package local_test

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/require"
)

// On Windows the adapter refuses at once, saying why.
func TestNewIsNotSupported(t *testing.T) {
	t.Parallel()
	_, err := local.New(config(withRoot(t.TempDir())))
	require.ErrorIs(t, err, paddock.ErrNotSupported)
	require.Contains(t, err.Error(), "Unix")
}
