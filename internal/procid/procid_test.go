package procid

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestState(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("process start times are read from /proc")
	}
	host, _ := os.Hostname()
	alive, known := State(Self())
	assert.True(t, known)
	assert.True(t, alive, "this process")

	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	alive, known = State(host + "/" + strconv.Itoa(cmd.Process.Pid) + "/1")
	assert.True(t, known)
	assert.False(t, alive, "an ended process")

	for _, id := range []string{"", "runtime-a", "other-host/1/2", host + "/x/1", host + "/-3/1"} {
		_, known := State(id)
		assert.False(t, known, id)
	}
}
