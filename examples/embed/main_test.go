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

// The example runs end to end and prints what its README promises.
func TestEmbed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	require.Equal(t, `created local/agent-1
exec: "hello\n" exit 3
exec with a 200ms deadline timed out: true transient: true
spawned session true and it answered its stdin
detached; live sessions: 1
re-attached: "ready\ngot one\ngot two\nbye\n", exit 7
terminated: exit 143
attach to a missing session is not_found: true
destroyed; get is not_found: true
`, out.String())
}
