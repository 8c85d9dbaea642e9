package actors_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
)

// The runtime's Adapter is a paddock.Adapter: every call goes through the
// runtime's actors.
func ExampleRuntime_Adapter() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	a := rt.Adapter("fake")
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})

	res, err := a.Exec(ctx, h, paddock.NewCmd("emit", "out:hello", "exit:3"), paddock.ExecOpts{})
	fmt.Printf("%q %d %v\n", res.Stdout, res.ExitCode, err)
	_, err = paddock.ListDir(ctx, a, h, "/") // the helpers work on it as on the adapter itself
	fmt.Println(err)
	// Output:
	// "hello" 3 <nil>
	// <nil>
}

// A spawn through the runtime is a stream of events, with stdin.
func ExampleRuntime_Adapter_spawn() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	a := rt.Adapter("fake")
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})

	s, _ := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
	_ = s.WriteStdin(ctx, []byte("ping"))
	_ = s.CloseStdin(ctx)
	for {
		ev, err := s.Next(ctx)
		if err == io.EOF {
			break
		}
		switch ev.Kind {
		case paddock.EventStdout:
			fmt.Printf("stdout %s\n", ev.Data)
		case paddock.EventExit:
			fmt.Printf("exit %d\n", ev.Code)
		}
	}
	// Output:
	// stdout ready
	// stdout echo:ping
	// exit 0
}

// The runtime's streams are FrameStreams: their frames, numbered, are on C.
func ExampleFrameStream() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	a := rt.Adapter("fake")
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})

	st, _ := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:one", "out:two"), paddock.SpawnOpts{})
	for f := range st.(*actors.FrameStream).C() {
		switch f := f.(type) {
		case *messages.Stdout:
			fmt.Printf("%d stdout %s\n", f.Seq, f.Data)
		case *messages.Exit:
			fmt.Printf("%d exit %d after %d output frames\n", f.Seq, f.Code, f.OutputFrames)
		}
	}
	// Output:
	// 1 stdout one
	// 2 stdout two
	// 3 exit 0 after 2 output frames
}

func ExampleStart() {
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	fmt.Println(rt.Adapter(paddock.ProviderFake).Capabilities().Has(paddock.CapAttach), rt.Window())
	_, err = rt.Adapter("nope").Create(context.Background(), "box", paddock.CreateOpts{})
	var unknown *paddock.UnknownProviderError
	fmt.Println(errors.As(err, &unknown))
	// Output:
	// true 64
	// true
}

// A detached session replays from byte zero to the stream that attaches.
func ExampleRuntime_Adapter_attach() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	a := rt.Adapter("fake")
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})

	s, _ := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:one", "stay"), paddock.SpawnOpts{Stdin: true, Detachable: true})
	_, _ = s.Next(ctx) // "one"
	_ = s.Close()      // detach: the session runs on
	at, _ := a.Attach(ctx, h, s.SessionID(), paddock.AttachOpts{Stdin: true})
	_ = at.CloseStdin(ctx)
	for {
		ev, err := at.Next(ctx) // the replay from byte zero, then the exit
		if err == io.EOF {
			break
		}
		switch ev.Kind {
		case paddock.EventStdout:
			fmt.Printf("stdout %s\n", ev.Data)
		case paddock.EventExit:
			fmt.Printf("exit %d\n", ev.Code)
		}
	}
	// Output:
	// stdout one
	// exit 0
}

// An owner actor receives its command's frames as messages and grants
// credit as it consumes them.
func ExampleRuntime_SpawnTo() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	h, _ := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})

	done := make(chan string)
	credits := actors.NewCredits(rt.Window())
	var got []string
	owner := rt.Engine().SpawnFunc(func(c *actor.Context) {
		switch f := c.Message().(type) {
		case *messages.Stdout:
			got = append(got, string(f.Data))
			credits.Consumed(c, f)
		case *messages.Exit:
			credits.Consumed(c, f)
			done <- fmt.Sprintf("%v exit %d", got, f.Code)
		}
	}, "owner")
	_, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("emit", "out:a", "out:b", "exit:2"), paddock.SpawnOpts{}, 0)
	fmt.Println(err)
	fmt.Println(<-done)
	// Output:
	// <nil>
	// [a b] exit 2
}

// A watch through the runtime reports a directory's changes.
func ExampleRuntime_Adapter_watch() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	a := rt.Adapter("fake")
	h, _ := a.Create(ctx, "box", paddock.CreateOpts{})
	_ = a.MakeDir(ctx, h, "/out", paddock.MakeDirOpts{})

	w, _ := paddock.Watch(ctx, a, h, "/out")
	defer w.Close()
	_ = a.MakeDir(ctx, h, "/out/logs", paddock.MakeDirOpts{})
	change, _ := w.Next(ctx)
	fmt.Println(change.Change, change.Path)
	// Output: create /out/logs
}
