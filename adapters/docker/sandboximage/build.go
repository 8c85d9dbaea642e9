// Package sandboximage builds the docker adapter's default sandbox image
// (docker.DefaultImage) through the Engine API: the Dockerfile embedded
// here, on a base image, with paddock-watch in the build context. It is
// what `go run ./cmd/paddock-image` runs, and what the adapter's tests
// build their image with.
package sandboximage

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock/adapters/docker"
)

//go:embed Dockerfile
var dockerfile []byte

// DefaultBase is the base a user's engine pulls: Debian's slim image.
const DefaultBase = "debian:trixie-slim"

// WatchPackage is the helper the image carries (docker.Config.Watch).
const WatchPackage = "github.com/paddockhq/paddock/cmd/paddock-watch"

// Options are one build; the zero value of each field takes its default.
type Options struct {
	// Base is the image built on; default DefaultBase. It needs /bin/sh,
	// and on a base without apt-get it must already have what the
	// adapter uses (cat, mkdir, nc).
	Base string
	// Tag names the result; default docker.DefaultImage.
	Tag string
	// Watch is paddock-watch built for the engine's architecture
	// (WatchHelper builds it); required.
	Watch []byte
	// Network is the network of the build's RUN step: "" is the engine's
	// default (the bridge, which apt-get needs); "none" suits an engine
	// without one (CI's).
	Network string
	// Progress receives the build's output; nil discards it.
	Progress io.Writer
}

// Build builds the image on the engine and returns its id. A failed step
// is an error carrying the engine's message.
func Build(ctx context.Context, engine *client.Client, opts Options) (string, error) {
	opts.Base = cmp.Or(opts.Base, DefaultBase)
	opts.Tag = cmp.Or(opts.Tag, docker.DefaultImage)
	if len(opts.Watch) == 0 {
		return "", errors.New("sandboximage: no paddock-watch binary for the build context")
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	buildContext, err := contextTar(opts.Watch)
	if err != nil {
		return "", err
	}
	base := opts.Base
	res, err := engine.ImageBuild(ctx, buildContext, client.ImageBuildOptions{
		Tags: []string{opts.Tag}, BuildArgs: map[string]*string{"BASE": &base}, NetworkMode: opts.Network,
		Remove: true, ForceRemove: true, Version: build.BuilderV1, Dockerfile: "Dockerfile",
	})
	if err != nil {
		return "", fmt.Errorf("sandboximage: build %s on %s: %w", opts.Tag, opts.Base, err)
	}
	defer res.Body.Close()
	id, err := readProgress(res.Body, opts.Progress)
	if err != nil {
		return "", fmt.Errorf("sandboximage: build %s on %s: %w", opts.Tag, opts.Base, err)
	}
	if id == "" { // an engine that reports no id: ask for it
		in, err := engine.ImageInspect(ctx, opts.Tag)
		if err != nil {
			return "", fmt.Errorf("sandboximage: inspect %s after its build: %w", opts.Tag, err)
		}
		id = in.ID
	}
	return id, nil
}

// contextTar is the build context: the Dockerfile and paddock-watch.
func contextTar(watch []byte) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{{"Dockerfile", 0o644, dockerfile}, {"paddock-watch", 0o755, watch}} {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	return &buf, tw.Close()
}

// readProgress copies the build's JSON messages to w as text and returns
// the image id the engine reports (or "" when it reports none); a
// message carrying an error ends the build with it.
func readProgress(body io.Reader, w io.Writer) (string, error) {
	dec := json.NewDecoder(body)
	id := ""
	for {
		var m jsonstream.Message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return id, nil
		}
		if err != nil {
			return "", fmt.Errorf("reading the engine's build output: %w", err)
		}
		if m.Error != nil {
			return "", errors.New(strings.TrimSpace(m.Error.Message))
		}
		if m.Stream != "" {
			_, _ = io.WriteString(w, m.Stream)
		}
		if m.Aux != nil {
			var aux struct{ ID string }
			if json.Unmarshal(*m.Aux, &aux) == nil && aux.ID != "" {
				id = aux.ID
			}
		}
	}
}

// WatchHelper builds paddock-watch as a static binary for the engine's
// architecture with the go command on PATH.
func WatchHelper(ctx context.Context, engine *client.Client) ([]byte, error) {
	info, err := engine.Info(ctx, client.InfoOptions{})
	if err != nil {
		return nil, fmt.Errorf("sandboximage: engine info: %w", err)
	}
	goarch, err := goArch(info.Info.Architecture)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "paddock-watch")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "paddock-watch")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, WatchPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sandboximage: go build %s: %v: %s", WatchPackage, err, bytes.TrimSpace(msg))
	}
	return os.ReadFile(out)
}

// goArch is Go's name for an engine's architecture (as uname -m says it).
func goArch(machine string) (string, error) {
	switch machine {
	case "x86_64", "amd64":
		return "amd64", nil
	case "aarch64", "arm64":
		return "arm64", nil
	case "":
		return runtime.GOARCH, nil
	}
	return "", fmt.Errorf("sandboximage: the engine runs on %q, which this command does not build for", machine)
}
