// Command custom-adapter runs the made-up "audited" provider (package
// audited: an adapter over another one that keeps an audit log) under
// Paddock's runtime, on top of the embedded local provider, and prints
// what it audited. Its test, audited_test.go, proves the adapter with
// the conformance suite.
//
//	go run ./examples/custom-adapter
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/examples/custom-adapter/audited"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "custom-adapter:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	inner, err := local.New(local.Config{TempRoot: true})
	if err != nil {
		return err
	}
	defer inner.Close()
	var auditLog bytes.Buffer // read only after the runtime has stopped
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{audited.Provider: audited.New(inner, &auditLog)}})
	if err != nil {
		return err
	}
	a := rt.Adapter(audited.Provider) // the audited adapter, through the runtime
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	if err != nil {
		return err
	}
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo hello from $0", "audited"), paddock.ExecOpts{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s/%s: %q exit %d\n", h.Provider, h.Name, res.Stdout, res.ExitCode)
	caps := a.Capabilities()
	fmt.Fprintln(out, "offers attach:", caps.Has(paddock.CapAttach), "offers files:", caps.Has(paddock.CapFiles))
	_, err = paddock.ListDir(ctx, a, h, "/")
	fmt.Fprintln(out, "list a directory: not_supported:", errors.Is(err, paddock.ErrNotSupported))
	if err := a.Destroy(ctx, h); err != nil {
		return err
	}
	if err := rt.Close(); err != nil {
		return err
	}
	fmt.Fprintln(out, "audit log:")
	for _, line := range strings.Split(strings.TrimSpace(auditLog.String()), "\n") {
		fmt.Fprintln(out, " ", line[strings.IndexByte(line, ' ')+1:]) // without the time
	}
	return nil
}
