package docker_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"go.uber.org/goleak"
)

// The tests run against a real engine: dockertest finds it, and skips
// the tests without one (CI makes that a failure).

// helperEnv makes the test binary a small program (a runtime that dies).
const helperEnv = "PADDOCK_DOCKER_TEST_HELPER"

// engineParallel is how many tests run at once unless -test.parallel says
// otherwise: these tests spend their time waiting on the engine, not on
// this process's CPU, so go test's default (GOMAXPROCS, two on a 2-core
// machine) would leave the engine idle between one test's calls.
const engineParallel = 4

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(max(engineParallel, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	dockertest.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: leaked goroutines: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newAdapter returns an adapter on the test image, with runc unless edit
// says otherwise, closed when the test ends.
func newAdapter(t testing.TB, edit ...func(*docker.Config)) *docker.Adapter {
	t.Helper()
	return dockertest.New(t, edit...)
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// runHelper plays a runtime that crashes: it creates the sandbox named in
// HELPER_SANDBOX, prints "ready", and waits to be killed.
func runHelper() int {
	a, err := docker.New(docker.Config{Image: os.Getenv(dockertest.ImageEnv), Runtime: docker.RuntimeRunc, MemoryMB: 128, DiskMB: 32})
	if err != nil {
		fmt.Println("new:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := a.Create(ctx, os.Getenv("HELPER_SANDBOX"), paddock.CreateOpts{}); err != nil {
		fmt.Println("create:", err)
		return 1
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return 0
}
