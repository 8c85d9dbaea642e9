package remote_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" { // a node or the emitter of nodes_test.go
		os.Exit(runRole(role))
	}
	goleak.VerifyTestMain(m)
}
