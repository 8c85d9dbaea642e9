package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The agent stopped mid-stream had a prefix of the output; the agent that
// re-attached has all of it, byte for byte, and the exit.
func TestAgentActor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	want := len(expectedOutput())
	require.Equal(t, 28893, want)
	require.Equal(t, `the first agent spawned session true
the first agent was stopped mid-stream: true (its bytes are a prefix: true)
the second agent re-attached: 28893 bytes of 28893, identical: true, exit 0
`, out.String())
}
