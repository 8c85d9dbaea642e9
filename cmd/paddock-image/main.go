// Command paddock-image builds the docker adapter's default sandbox image,
// paddock/sandbox:latest, on the engine DOCKER_HOST names (or the default
// socket): Debian's slim image with a shell, coreutils, curl, git,
// python3, nc and Paddock's helpers (paddock-watch, paddock-egress). Run it from the repository's root:
//
//	go run ./cmd/paddock-image
//
// -base builds on another image (one without apt-get must already hold
// what the adapter uses); -network none suits an engine with no bridge.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/sandboximage"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return // the usage is printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "paddock-image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paddock-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", sandboximage.DefaultBase, "the image to build on")
	tag := fs.String("tag", docker.DefaultImage, "the name of the result")
	network := fs.String("network", "", `the network of the build's RUN step ("" the engine's default, "none")`)
	quiet := fs.Bool("q", false, "print only the image id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	engine, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer engine.Close()
	helpers, err := sandboximage.BuildHelpers(ctx, engine)
	if err != nil {
		return err
	}
	progress := stderr
	if *quiet {
		progress = io.Discard
	}
	id, err := sandboximage.Build(ctx, engine, sandboximage.Options{Base: *base, Tag: *tag, Helpers: helpers,
		Network: *network, Progress: progress})
	if err != nil {
		return err
	}
	if *quiet {
		_, err = fmt.Fprintln(stdout, id)
		return err
	}
	_, err = fmt.Fprintf(stdout, "built %s (%s) on %s\n", *tag, id, *base)
	return err
}
