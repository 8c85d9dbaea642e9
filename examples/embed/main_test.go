package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example runs end to end and prints what its README promises.
func Example() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// created local/agent-1
	// exec: "hello\n" exit 3
	// exec with a 200ms deadline timed out: true transient: true
	// spawned session true and it answered its stdin
	// detached; live sessions: 1
	// re-attached: "ready\ngot one\ngot two\nbye\n", exit 7
	// terminated: exit 143
	// attach to a missing session is not_found: true
	// destroyed; get is not_found: true
}
