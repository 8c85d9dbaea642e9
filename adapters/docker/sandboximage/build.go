// Package sandboximage builds the docker adapter's default sandbox image
// (docker.DefaultImage) through the Engine API: the Dockerfile embedded
// here, on a base image, with Paddock's helpers in the build context. It is
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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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

// HelperPackages are the helpers the image carries (docker.Config.Helpers),
// by the name of their binary.
var HelperPackages = map[string]string{
	"paddock-watch":  "github.com/paddockhq/paddock/cmd/paddock-watch",
	"paddock-egress": "github.com/paddockhq/paddock/cmd/paddock-egress",
}

// Options are one build; the zero value of each field takes its default.
type Options struct {
	// Base is the image built on; default DefaultBase. It needs /bin/sh,
	// and on a base without apt-get it must already have what the
	// adapter uses (cat, mkdir, nc).
	Base string
	// Tag names the result; default docker.DefaultImage.
	Tag string
	// Helpers are the binaries of HelperPackages, by name, built for the
	// engine's architecture (BuildHelpers builds them); required.
	Helpers map[string][]byte
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
	for name := range HelperPackages {
		if len(opts.Helpers[name]) == 0 {
			return "", errors.New("sandboximage: no " + name + " binary for the build context")
		}
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	buildContext, err := contextTar(opts.Helpers)
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

// contextTar is the build context: the Dockerfile and the helpers.
func contextTar(helpers map[string][]byte) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, body []byte) error {
		h := &tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	if err := add("Dockerfile", 0o644, dockerfile); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(HelperPackages)) {
		if err := add(name, 0o755, helpers[name]); err != nil {
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

// BuildHelpers builds each of HelperPackages as a static binary for the
// engine's architecture with the go command on PATH.
func BuildHelpers(ctx context.Context, engine *client.Client) (map[string][]byte, error) {
	info, err := engine.Info(ctx, client.InfoOptions{})
	if err != nil {
		return nil, fmt.Errorf("sandboximage: engine info: %w", err)
	}
	goarch, err := goArch(info.Info.Architecture)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "paddock-helpers")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	helpers := map[string][]byte{}
	for name, pkg := range HelperPackages {
		out := filepath.Join(dir, name)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sandboximage: go build %s: %v: %s", pkg, err, bytes.TrimSpace(msg))
		}
		if helpers[name], err = os.ReadFile(out); err != nil {
			return nil, err
		}
	}
	return helpers, nil
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
