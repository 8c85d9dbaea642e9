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
	// the test fails at first: true
	// patch in task: test exit 0
	// guess in task-guess: test exit 1
	// keeping: patch
	// restored: "a=$1 b=$2\necho $((a - b))\n"
	// the test passes now: true
}
