// Package dockertest runs the docker adapter against a real engine in
// tests, yours too: it finds the engine (DOCKER_HOST, or the default
// socket) and skips the test without one (or fails it, in CI, with
// PADDOCK_REQUIRE_DOCKER=1), makes the test images from the host's busybox
// when they are absent (nothing is pulled), and removes what the test
// binary's sandboxes left behind.
package dockertest

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/sandboximage"
	"github.com/paddockhq/paddock/internal/procid"
	"github.com/stretchr/testify/require"
)

// The environment and the images. The sandbox image is ImageEnv's, or
// TestImage, built the way `go run ./cmd/paddock-image` builds the default
// image, on BareImage (the host's busybox imported). DistroImage is shaped
// like the images agent tools use: /tmp, /home, /var, /run, a root-owned
// /workspace holding a project file, and a non-root user other than the
// adapter's; no paddock-watch.
const (
	RequireEnv  = "PADDOCK_REQUIRE_DOCKER"
	ImageEnv    = "PADDOCK_DOCKER_IMAGE"
	TestImage   = "paddock-test/sandbox:3"
	BareImage   = "paddock-test/busybox-base:3"
	DistroImage = "paddock-test/distro:3"
)

var engine struct {
	once  sync.Once
	err   error
	image string
}

// Image is the sandbox image, once an engine answers and the test images
// exist; without an engine it skips t (or, with RequireEnv=1, fails it).
func Image(t testing.TB) string {
	t.Helper()
	engine.once.Do(func() {
		engine.image = os.Getenv(ImageEnv)
		engine.image = cmp.Or(engine.image, TestImage)
		cli, err := client.New(client.FromEnv)
		if err != nil {
			engine.err = err
			return
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
			engine.err = err
			return
		}
		engine.err = ensureImages(ctx, cli, engine.image)
	})
	if engine.err != nil {
		msg := fmt.Sprintf("no usable Docker engine (DOCKER_HOST=%q): %v", os.Getenv("DOCKER_HOST"), engine.err)
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; these tests need one (set " + RequireEnv + "=1 to make this a failure)")
	}
	return engine.image
}

// ensureImages makes the bare busybox base, the test image (through
// sandboximage, on that base) and the distro-shaped image when they are
// not on the engine.
func ensureImages(ctx context.Context, cli *client.Client, image string) error {
	if !hasImage(ctx, cli, BareImage) { // also a test's bare image
		if err := importBusybox(ctx, cli, BareImage, nil); err != nil {
			return err
		}
	}
	if !hasImage(ctx, cli, image) {
		helpers, err := sandboximage.BuildHelpers(ctx, cli)
		if err != nil {
			return err
		}
		if _, err := sandboximage.Build(ctx, cli, sandboximage.Options{Base: BareImage, Tag: image, Helpers: helpers, Network: "none"}); err != nil {
			return err
		}
	}
	if hasImage(ctx, cli, DistroImage) {
		return nil
	}
	project := []byte("print('hello')\n")
	passwd := []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1001:1001:app:/home/app:/bin/sh\n")
	group := []byte("root:x:0:\napp:x:1001:\n")
	return importBusybox(ctx, cli, DistroImage, []tarEntry{
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

// Cleanup removes the sandboxes this test process created and left (a
// failed test's cleanup, say); call it from TestMain after the tests ran.
func Cleanup() {
	if engine.err != nil || engine.image == "" {
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
		Filters: client.Filters{}.Add("label", "dev.paddock.owner="+procid.Self())})
	if err != nil {
		return
	}
	for _, c := range res.Items {
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
}

// New returns an adapter on the sandbox image, with runc unless edit says
// otherwise, closed when t ends.
func New(t testing.TB, edit ...func(*docker.Config)) *docker.Adapter {
	t.Helper()
	cfg := docker.Config{Image: Image(t), Runtime: docker.RuntimeRunc, MemoryMB: 256, DiskMB: 64, MaxProcesses: 128, CPUs: 1,
		Helpers:       true, // the sandbox image has Paddock's helpers (sandboximage builds them in)
		CheckpointDir: t.TempDir()}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := docker.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

// ExecAsRoot runs script with sh as root (uid 0, no capabilities: the
// container's) in the container, through the engine: what only the
// engine can start, since the adapter runs every command as its user. It
// returns the output (stdout and stderr together) and the exit code.
func ExecAsRoot(t testing.TB, container, script string) (string, int) {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	require.NoError(t, err)
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cli.ExecCreate(ctx, container, client.ExecCreateOptions{User: "0:0", AttachStdout: true, AttachStderr: true,
		Cmd: []string{"/bin/sh", "-c", script}})
	require.NoError(t, err)
	hj, err := cli.ExecAttach(ctx, res.ID, client.ExecAttachOptions{})
	require.NoError(t, err)
	defer hj.Close()
	var out bytes.Buffer
	_, err = stdcopy.StdCopy(&out, &out, hj.Reader)
	require.NoError(t, err)
	for {
		in, err := cli.ExecInspect(ctx, res.ID, client.ExecInspectOptions{})
		require.NoError(t, err)
		if !in.Running {
			return out.String(), in.ExitCode
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the root exec did not end: %s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
