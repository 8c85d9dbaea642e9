package actors_test

import (
	"context"
	"fmt"

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
