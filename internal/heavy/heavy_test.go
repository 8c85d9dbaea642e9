package heavy

import (
	"bufio"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// helperEnv makes the test binary a process that holds the lock at the
// path it names until its stdin closes.
const helperEnv = "PADDOCK_HEAVY_HELPER"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		f, err := acquire(path)
		if err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
		f.Close()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestVolume(t *testing.T) {
	t.Parallel()
	if Race {
		require.Equal(t, 128, Volume(1024))
		require.Equal(t, 1, Volume(3), "never nothing")
	} else {
		require.Equal(t, 1024, Volume(1024))
	}
}
