package actors_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
)

func ExampleRuntime_Exec() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}})
	defer rt.Shutdown(context.Background())
	h, _ := rt.Create(context.Background(), "fake", "box", paddock.CreateOpts{})

	res, err := rt.Exec(context.Background(), h, paddock.NewCmd("emit", "out:hello", "exit:3"), paddock.ExecOpts{})
	fmt.Printf("%q %d %v\n", res.Stdout, res.ExitCode, err)
	// Output: "hello" 3 <nil>
}

func ExampleRuntime_Spawn() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	h, _ := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})

	s, _ := rt.Spawn(ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
	_ = s.WriteStdin(ctx, []byte("ping"))
	_ = s.CloseStdin(ctx)
	for f := range s.C() {
		switch f := f.(type) {
		case *messages.Stdout:
			fmt.Printf("%d stdout %s\n", f.Seq, f.Data)
		case *messages.Exit:
			fmt.Printf("%d exit %d after %d output frames\n", f.Seq, f.Code, f.OutputFrames)
		}
	}
	// Output:
	// 1 stdout ready
	// 2 stdout echo:ping
	// 3 exit 0 after 2 output frames
}

func ExampleStart() {
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	caps, _ := rt.Capabilities(paddock.ProviderFake)
	fmt.Println(caps.Has(paddock.CapAttach), rt.Window())
	_, err = rt.Create(context.Background(), "nope", "box", paddock.CreateOpts{})
	var unknown *paddock.UnknownProviderError
	fmt.Println(errors.As(err, &unknown))
	// Output:
	// true 64
	// true
}

func ExampleRuntime_Attach() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	h, _ := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})

	s, _ := rt.Spawn(ctx, h, paddock.NewCmd("emit", "out:one", "stay"), paddock.SpawnOpts{Stdin: true, Detachable: true})
	<-s.C()       // "one"
	_ = s.Close() // detach: the session runs on
	at, _ := rt.Attach(ctx, h, s.SessionID(), paddock.AttachOpts{Stdin: true})
	_ = at.CloseStdin(ctx)
	for f := range at.C() { // the replay from byte zero, then the exit
		switch f := f.(type) {
		case *messages.Stdout:
			fmt.Printf("stdout %s\n", f.Data)
		case *messages.Exit:
			fmt.Printf("exit %d\n", f.Code)
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
	h, _ := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})

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

func ExampleRuntime_Watch() {
	rt, _ := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	h, _ := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})
	_ = rt.MakeDir(ctx, h, "/out", paddock.MakeDirOpts{})

	w, _ := rt.Watch(ctx, h, "/out")
	defer w.Close()
	_ = rt.MakeDir(ctx, h, "/out/logs", paddock.MakeDirOpts{})
	f := <-w.C()
	change := f.(*messages.FileChange)
	fmt.Println(change.Change, change.Path)
	// Output: create /out/logs
}
