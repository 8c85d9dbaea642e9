// Command paddock-init is the init of the local adapter's sandboxes as a
// program of its own, for local.Config.InitProgram: the adapter starts it once
// per sandbox, and it starts that sandbox's commands. Build it from the
// same Paddock version as the program that embeds the adapter:
//
//	go build -o paddock-init github.com/paddockhq/paddock/cmd/paddock-init
//
// It is the adapter's package that does the work, when the adapter starts
// this program; run any other way it only says what it is for.
package main

import (
	"fmt"
	"os"

	_ "github.com/paddockhq/paddock/adapters/local" // its init runs a sandbox's init when the adapter started this program
)

func main() {
	fmt.Fprintln(os.Stderr, "paddock-init: the init of the local adapter's sandboxes; the adapter starts it (local.Config.InitProgram), not you")
	os.Exit(2)
}
