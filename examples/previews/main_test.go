package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example runs end to end and prints what its README promises.
func Example() {
	if err := run(context.Background(), os.Stdout, "local"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// sandbox on local
	// the sandbox serves its site on its own loopback
	// preview of the server's port, under the proxy: true
	// printed, the token is [redacted]
	// with the token: 200 "<h1>hello from the sandbox</h1>\n"
	// without it: 401
	// after revoking it: 401
}

func TestUnknownProvider(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), os.Stdout, "nope")
	if err == nil || !strings.Contains(err.Error(), `unknown provider "nope"`) {
		t.Fatalf("want the unknown provider refused, got %v", err)
	}
}
