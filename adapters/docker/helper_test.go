package docker_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
)

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
