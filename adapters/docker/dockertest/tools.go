package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/stretchr/testify/require"
)

// ToolsImage is the sandbox image with the host's curl and git (and the
// libraries they load), for tests that go out through a sandbox's egress
// proxy.
const ToolsImage = "paddock-test/tools:2"

// toolFiles are the host's programs ToolsImage carries, at their paths.
var toolFiles = []string{"/usr/bin/curl", "/usr/bin/git", "/usr/lib/git-core/git", "/usr/lib/git-core/git-remote-https", "/usr/lib/git-core/git-remote-http"}

var tools struct {
	once sync.Once
	err  error
}

// Tools is ToolsImage, built on the sandbox image when absent; without
// curl or git on the host it skips t (fails it in CI).
func Tools(t testing.TB) string {
	t.Helper()
	base := Image(t)
	adaptertest.NeedsTools(t, "curl", "git", "ldd")
	tools.once.Do(func() {
		cli, err := client.New(client.FromEnv)
		if err != nil {
			tools.err = err
			return
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if hasImage(ctx, cli, ToolsImage) {
			return
		}
		tools.err = buildTools(ctx, cli, base)
	})
	require.NoError(t, tools.err, "building %s", ToolsImage)
	return ToolsImage
}

// lddPath is a library path in ldd's answer.
var lddPath = regexp.MustCompile(`(?m)(/\S+) \(0x`)

// buildTools builds ToolsImage from base and the host's tools with every
// library they load (and the loader), each at the path ldd names.
func buildTools(ctx context.Context, cli *client.Client, base string) error {
	files := map[string]bool{}
	for _, f := range toolFiles {
		if _, err := os.Stat(f); err != nil {
			continue // git-remote-http is not everywhere
		}
		files[f] = true
		out, err := exec.CommandContext(ctx, "ldd", f).Output()
		if err != nil {
			return fmt.Errorf("ldd %s: %w", f, err)
		}
		for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
			files[m[1]] = true
		}
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	paths := make([]string, 0, len(files))
	for f := range files {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	for _, f := range paths {
		body, err := os.ReadFile(f) // through links: each path a file of its own
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.Clean(f)[1:], Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	var buildContext bytes.Buffer
	cw := tar.NewWriter(&buildContext)
	for _, f := range []struct {
		name string
		body []byte
	}{{"Dockerfile", []byte("FROM " + base + "\nADD tools.tar /\nENV PATH=/usr/local/bin:/usr/bin:/bin\n")}, {"tools.tar", layer.Bytes()}} {
		if err := cw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := cw.Write(f.body); err != nil {
			return err
		}
	}
	if err := cw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageBuild(ctx, &buildContext, client.ImageBuildOptions{Tags: []string{ToolsImage}, NetworkMode: "none",
		Remove: true, ForceRemove: true, Version: build.BuilderV1, Dockerfile: "Dockerfile"})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(res.Body)
	if !hasImage(ctx, cli, ToolsImage) {
		return fmt.Errorf("building %s: %s", ToolsImage, out.String())
	}
	return nil
}
