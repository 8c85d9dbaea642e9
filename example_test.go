package paddock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
)

func ExampleWithBackoff() {
	calls := 0
	err := paddock.WithBackoff(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return &paddock.UnavailableError{Detail: "http", Status: 503} // transient: retried
		}
		return nil
	}, paddock.BackoffOpts{Base: time.Millisecond, Label: "get sandbox"})
	fmt.Println(calls, err)
	// Output: 3 <nil>
}

func ExampleIsTransient() {
	err := &paddock.OpError{Op: "get", Provider: "sprites", Name: "box", Err: paddock.ErrNotFound}
	fmt.Println(err, paddock.IsTransient(err), errors.Is(err, paddock.ErrNotFound))
	fmt.Println(paddock.IsTransient(paddock.ErrClosedBeforeExit))
	// Output:
	// get sprites/box: not found false true
	// true
}

func ExampleTerminateSession() {
	// Validation comes before anything else, so bad input is invalid even on
	// an adapter that could never terminate a session.
	_, err := paddock.ValidateTermination("../other", paddock.TerminateOpts{})
	fmt.Println(errors.Is(err, paddock.ErrTerminationRequest))
	// Output: true
}

func ExampleRegistry() {
	reg := paddock.Registry{paddock.ProviderFake: fake.New()}
	a, err := reg.Lookup(paddock.ProviderFake)
	fmt.Println(a.Provider(), err)
	_, err = reg.Lookup("nope")
	var unknown *paddock.UnknownProviderError
	fmt.Println(errors.As(err, &unknown))
	// Output:
	// fake <nil>
	// true
}

func ExampleSupports() {
	a := fake.New()
	fmt.Println(paddock.Supports(a, paddock.CapAttach), paddock.Supports(a, paddock.CapSignal))
	// An optional operation the adapter does not offer is not_supported,
	// never a fallback to something else.
	fmt.Println(errors.Is(paddock.Require(a, paddock.CapSignal), paddock.ErrNotSupported))
	// Output:
	// true false
	// true
}

func ExampleCreateNew() {
	ctx := context.Background()
	a := fake.New()
	h, err := paddock.CreateNew(ctx, a, "box", paddock.CreateNewOpts{})
	fmt.Println(h.Name, h.InstanceID != "", err)
	_, err = paddock.CreateNew(ctx, a, "box", paddock.CreateNewOpts{})
	fmt.Println(errors.Is(err, paddock.ErrAlreadyExists))
	// Output:
	// box true <nil>
	// true
}

func ExampleListDir() {
	ctx := context.Background()
	a := fake.New()
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})
	_ = a.WriteFile(ctx, h, "/src/main.go", 0o644, strings.NewReader("package main\n"))
	_ = paddock.MakeDir(ctx, a, h, "/src/pkg", paddock.MakeDirOpts{})
	entries, _ := paddock.ListDir(ctx, a, h, "/src")
	for _, e := range entries {
		fmt.Println(e.Name, e.Type, e.Size)
	}
	_, err := paddock.Stat(ctx, a, h, "/src/../../etc/passwd")
	fmt.Println(errors.Is(err, paddock.ErrInvalid))
	// Output:
	// main.go file 13
	// pkg dir 0
	// true
}

func ExampleWatch() {
	ctx := context.Background()
	a := fake.New()
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})
	_ = paddock.MakeDir(ctx, a, h, "/out", paddock.MakeDirOpts{})
	w, _ := paddock.Watch(ctx, a, h, "/out")
	defer w.Close()
	_ = a.WriteFile(ctx, h, "/out/report.txt", 0o644, strings.NewReader("done"))
	_ = paddock.Remove(ctx, a, h, "/out/report.txt", paddock.RemoveOpts{})
	for range 3 {
		ev, _ := w.Next(ctx)
		fmt.Println(ev.Change, ev.Path)
	}
	// Output:
	// create /out/report.txt
	// write /out/report.txt
	// remove /out/report.txt
}

func ExampleSignalCommand() {
	ctx := context.Background()
	a := fake.New() // the fake sends no signals
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})
	st, _ := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:hi"), paddock.SpawnOpts{})
	defer st.Close()
	fmt.Println(errors.Is(paddock.SignalCommand(ctx, a, st, paddock.SignalInt), paddock.ErrNotSupported))
	fmt.Println(errors.Is(paddock.SignalCommand(ctx, a, st, "STOP"), paddock.ErrInvalid), "(outside the contract's set)")
	// Output:
	// true
	// true (outside the contract's set)
}

func ExampleKindOf() {
	for _, err := range []error{
		paddock.ErrNotFound,
		&paddock.RateLimitedError{RetryAfter: paddock.Duration(time.Second)},
		fmt.Errorf("create box: %w", &paddock.UnavailableError{Detail: "http", Status: 502}),
	} {
		fmt.Println(paddock.KindOf(err), paddock.IsTransient(err))
	}
	// Output:
	// not_found false
	// rate_limited true
	// unavailable true
}

func ExampleNewSecret() {
	token := paddock.NewSecret("sk-live-123")
	fmt.Println(token, fmt.Sprintf("%#v", token) != "sk-live-123")
	// Output: [redacted] true
}
