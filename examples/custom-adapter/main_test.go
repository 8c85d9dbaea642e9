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
	// audited/box: "hello from audited\n" exit 0
	// offers attach: true offers files: false
	// list a directory: not_supported: true
	// audit log:
	//   create box
	//   exec box
	//   destroy box
}
