package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/sandboximage"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The tests run against a real engine: DOCKER_HOST (or the default
// socket). Without one they skip, saying so; with PADDOCK_REQUIRE_DOCKER=1
// (CI) they fail instead. The image is PADDOCK_DOCKER_IMAGE, default
// paddock-test/sandbox:3, built when absent the way `go run
// ./cmd/paddock-image` builds the default image, on a base imported from
// the host's busybox (no image can be pulled here).
const (
	requireEnv = "PADDOCK_REQUIRE_DOCKER"
	imageEnv   = "PADDOCK_DOCKER_IMAGE"
	testImage  = "paddock-test/sandbox:3"
	testBase   = "paddock-test/busybox-base:3"
	// distroImage is shaped like the images agent tools use: /tmp, /home,
	// /var, /run, a root-owned /workspace holding a project file, and a
	// non-root user other than the adapter's; no paddock-watch.
	distroImage = "paddock-test/distro:3"
)

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
// and makes sure the test images exist.
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
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
			engineCheck.err = err
			return
		}
		engineCheck.err = ensureImages(ctx, cli, engineCheck.image)
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

// ensureImages makes the bare busybox base, the test image (through
// sandboximage, on that base) and the distro-shaped image when they are
// not on the engine.
func ensureImages(ctx context.Context, cli *client.Client, image string) error {
	if !hasImage(ctx, cli, testBase) { // also a test's bare image
		if err := importBusybox(ctx, cli, testBase, nil); err != nil {
			return err
		}
	}
	if !hasImage(ctx, cli, image) {
		watch, err := sandboximage.WatchHelper(ctx, cli)
		if err != nil {
			return err
		}
		if _, err := sandboximage.Build(ctx, cli, sandboximage.Options{Base: testBase, Tag: image, Watch: watch, Network: "none"}); err != nil {
			return err
		}
	}
	if hasImage(ctx, cli, distroImage) {
		return nil
	}
	project := []byte("print('hello')\n")
	passwd := []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1001:1001:app:/home/app:/bin/sh\n")
	group := []byte("root:x:0:\napp:x:1001:\n")
	return importBusybox(ctx, cli, distroImage, []tarEntry{
		{h: tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}},
		{h: tar.Header{Name: "home/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{h: tar.Header{Name: "home/app/", Typeflag: tar.TypeDir, Mode: 0o750, Uid: 1001, Gid: 1001}},
		{h: tar.Header{Name: "root/", Typeflag: tar.TypeDir, Mode: 0o700}},
		{h: tar.Header{Name: "var/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{h: tar.Header{Name: "var/tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}},
		{h: tar.Header{Name: "run/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{h: tar.Header{Name: "workspace/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{h: tar.Header{Name: "workspace/main.py", Typeflag: tar.TypeReg, Mode: 0o644}, body: project},
		{h: tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644}, body: passwd},
		{h: tar.Header{Name: "etc/group", Typeflag: tar.TypeReg, Mode: 0o644}, body: group},
	}, "USER app", "WORKDIR /workspace")
}

func hasImage(ctx context.Context, cli *client.Client, image string) bool {
	_, err := cli.ImageInspect(ctx, image)
	return err == nil
}

// tarEntry is one file of an imported image.
type tarEntry struct {
	h    tar.Header
	body []byte
}

// importBusybox imports the host's busybox and its applets under /bin,
// an empty /etc, and extra, as image (PATH=/bin, plus changes).
func importBusybox(ctx context.Context, cli *client.Client, image string, extra []tarEntry, changes ...string) error {
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
	entries := []tarEntry{
		{h: tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{h: tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{h: tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755}, body: bin},
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" {
			entries = append(entries, tarEntry{h: tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}})
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range append(entries, extra...) {
		h := e.h
		h.ModTime = time.Unix(0, 0)
		h.Size = int64(len(e.body))
		if err := tw.WriteHeader(&h); err != nil {
			return err
		}
		if _, err := tw.Write(e.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, image,
		client.ImageImportOptions{Changes: append([]string{"ENV PATH=/bin"}, changes...)})
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = io.Copy(io.Discard, res)
	return err
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
		Watch: true} // the test image has paddock-watch (sandboximage builds it in)
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
