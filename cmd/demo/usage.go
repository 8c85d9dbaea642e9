package main

import (
	"flag"
	"fmt"
	"io"
)

// commands are the demo's subcommands, in the order usage lists them.
var commands = []struct {
	name, synopsis, about string
	flags                 func() *flag.FlagSet
}{
	{"serve", "demo [serve] [flags]", "the web console on loopback (the default command)",
		func() *flag.FlagSet { fs, _ := serveFlags(); return fs }},
	{"run", "demo run [flags] -- CMD ARGS...", "run a command, stream its output, exit with its code (127: no such program, 126: not executable, 125: the command's fate is unknown); Ctrl-C stops the command on every provider and exits 130",
		func() *flag.FlagSet { fs, _ := cliFlags("run"); return fs }},
	{"sessions", "demo sessions [flags]", "list the sandbox's sessions",
		func() *flag.FlagSet { fs, _ := cliFlags("sessions"); return fs }},
	{"attach", "demo attach [flags] SESSION", "replay a session from byte zero, then follow it; Ctrl-C detaches and leaves it running",
		func() *flag.FlagSet { fs, _ := cliFlags("attach"); return fs }},
	{"terminate", "demo terminate [flags] SESSION", "stop a session",
		func() *flag.FlagSet { fs, _ := cliFlags("terminate"); return fs }},
}

// usage prints every command with its flags.
func usage(w io.Writer) {
	fmt.Fprintln(w, "demo: a web console and a CLI over Paddock's runtime, on the embedded local provider (no account, daemon or network) and the fake.")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-34s %s\n", c.synopsis, c.about)
	}
	for _, c := range commands {
		fmt.Fprintf(w, "\nFlags of %s:\n", c.name)
		fs := c.flags()
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// commandUsage prints one command's synopsis and flags.
func commandUsage(w io.Writer, fs *flag.FlagSet) {
	for _, c := range commands {
		if c.name == fs.Name() {
			fmt.Fprintf(w, "usage: %s\n%s\n\nFlags:\n", c.synopsis, c.about)
		}
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
}
