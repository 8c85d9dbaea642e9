package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The agent stopped mid-stream had a prefix of the output; the agent that
// re-attached has all of it, byte for byte, and the exit.
func Example() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// the first agent spawned session true
	// the first agent was stopped mid-stream: true (its bytes are a prefix: true)
	// the second agent re-attached: 28893 bytes of 28893, identical: true, exit 0
}
