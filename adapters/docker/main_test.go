package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The tests run against a real engine: DOCKER_HOST (or the default
// socket). Without one they skip, saying so; with PADDOCK_REQUIRE_DOCKER=1
// (CI) they fail instead. The image is PADDOCK_DOCKER_IMAGE, default
// paddock-test/busybox:2, imported from the host's busybox when absent.
const (
	requireEnv = "PADDOCK_REQUIRE_DOCKER"
	imageEnv   = "PADDOCK_DOCKER_IMAGE"
	testImage  = "paddock-test/busybox:2"
)

// helperEnv makes the test binary a small program (a runtime that dies).
const helperEnv = "PADDOCK_DOCKER_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	code := m.Run()
	cleanupLeftovers()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: leaked goroutines: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

var engineCheck struct {
	once  sync.Once
	err   error
	image string
}

// requireEngine skips (or, in CI, fails) the test when no engine answers,
// and makes sure the test image exists.
func requireEngine(t testing.TB) string {
	t.Helper()
	engineCheck.once.Do(func() {
		engineCheck.image = os.Getenv(imageEnv)
		if engineCheck.image == "" {
			engineCheck.image = testImage
		}
		cli, err := client.New(client.FromEnv)
		if err != nil {
			engineCheck.err = err
			return
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
			engineCheck.err = err
			return
		}
		engineCheck.err = ensureImage(ctx, cli, engineCheck.image)
	})
	if engineCheck.err != nil {
		msg := fmt.Sprintf("no usable Docker engine (DOCKER_HOST=%q): %v", os.Getenv("DOCKER_HOST"), engineCheck.err)
		if os.Getenv(requireEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; these tests need one (set " + requireEnv + "=1 to make this a failure)")
	}
	return engineCheck.image
}

// ensureImage imports a busybox root filesystem as image when it is not
// on the engine: busybox and its applets, paddock-watch, a passwd with uid
// 1000, and no /tmp, /workspace or /run/paddock (the scratch mounts).
func ensureImage(ctx context.Context, cli *client.Client, image string) error {
	if _, err := cli.ImageInspect(ctx, image); err == nil {
		return nil
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("image %s is absent and there is no busybox to build it from: %w", image, err)
	}
	bin, err := os.ReadFile(bb)
	if err != nil {
		return err
	}
	list, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body []byte) {
		h.ModTime = time.Unix(0, 0)
		_ = tw.WriteHeader(h)
		_, _ = tw.Write(body)
	}
	add(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755}, nil)
	add(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}, nil)
	add(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))}, bin)
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" {
			add(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}, nil)
		}
	}
	passwd := []byte("root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n")
	group := []byte("root:x:0:\nsandbox:x:1000:\n")
	watch, err := buildWatchHelper()
	if err != nil {
		return err
	}
	add(&tar.Header{Name: "bin/paddock-watch", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(watch))}, watch)
	add(&tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(passwd))}, passwd)
	add(&tar.Header{Name: "etc/group", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(group))}, group)
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, image,
		client.ImageImportOptions{Changes: []string{"ENV PATH=/bin"}})
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = io.Copy(io.Discard, res)
	return err
}

// buildWatchHelper builds cmd/paddock-watch as a static binary for the
// test image (Config.Watch).
func buildWatchHelper() ([]byte, error) {
	dir, err := os.MkdirTemp("", "paddock-watch")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "paddock-watch")
	cmd := exec.Command("go", "build", "-o", out, "../../cmd/paddock-watch")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building paddock-watch for the test image: %v: %s", err, msg)
	}
	return os.ReadFile(out)
}

// cleanupLeftovers removes sandboxes this test process created and left
// (a failed test's cleanup, say).
func cleanupLeftovers() {
	if engineCheck.err != nil || engineCheck.image == "" {
		return
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", "dev.paddock.owner="+docker.SelfOwner())})
	if err != nil {
		return
	}
	for _, c := range res.Items {
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	}
}

// newAdapter returns an adapter on the test image, with runc unless edit
// says otherwise, closed when the test ends.
func newAdapter(t testing.TB, edit ...func(*docker.Config)) *docker.Adapter {
	t.Helper()
	image := requireEngine(t)
	cfg := docker.Config{Image: image, Runtime: docker.RuntimeRunc, MemoryMB: 256, DiskMB: 64, MaxProcesses: 128, CPUs: 1,
		Watch: true} // the test image has paddock-watch (.ci/run builds it in)
	for _, e := range edit {
		e(&cfg)
	}
	a, err := docker.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
