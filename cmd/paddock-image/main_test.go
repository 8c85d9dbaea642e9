package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Bad command lines are refused before anything reaches an engine; -h
// lists the flags. (.ci/run builds the image with this command.)
func TestCommandLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-bogus"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-h"}, "help requested"},
	} {
		var out, errOut bytes.Buffer
		err := run(tc.args, &out, &errOut)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.err)
		assert.Empty(t, out.String())
	}
	var out, errOut bytes.Buffer
	_ = run([]string{"-h"}, &out, &errOut)
	for _, flag := range []string{"-base", "-tag", "-network", "-q"} {
		assert.Contains(t, errOut.String(), flag)
	}
}
