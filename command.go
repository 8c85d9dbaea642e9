package paddock

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/rs/zerolog"
)

// EnvVar is one environment variable of a command. Its JSON form shows the
// name and "[redacted]" for the value, since env values often carry secrets;
// decoding JSON reads the value normally.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MarshalJSON encodes the name and a redacted value.
func (e EnvVar) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}{e.Name, redacted})
}

// Cmd is a command to run: an argv, never a shell line. Path is the program
// (looked up in the sandbox's PATH when it has no slash), Args its arguments,
// Env an ordered list of variables set over the adapter's base environment
// (a later entry wins over an earlier one of the same name), Dir the working
// directory ("" = the adapter's default).
//
// Env values often carry secrets: fmt, zerolog and slog output of a Cmd show
// only the variable names.
type Cmd struct {
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	Env  []EnvVar `json:"env,omitempty"`
	Dir  string   `json:"dir,omitempty"`
}

// NewCmd returns a Cmd for path and args with no env and the default dir.
func NewCmd(path string, args ...string) Cmd { return Cmd{Path: path, Args: args} }

// Argv returns Path followed by Args.
func (c Cmd) Argv() []string { return append([]string{c.Path}, c.Args...) }

// Line returns the command line as Session.Command records it: path and
// arguments joined by single spaces.
func (c Cmd) Line() string { return strings.Join(c.Argv(), " ") }

// Validate reports an *InvalidError with detail "command" when c cannot be
// run anywhere: an empty path, a NUL byte in the path, an argument, the dir
// or an env entry, or an env name that is empty or contains '='.
func (c Cmd) Validate() error {
	bad := func(why string) error { return &InvalidError{Detail: DetailCommand + ": " + why} }
	if c.Path == "" {
		return bad("empty path")
	}
	if strings.IndexByte(c.Path, 0) >= 0 || strings.IndexByte(c.Dir, 0) >= 0 {
		return bad("NUL byte in path or dir")
	}
	for _, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return bad("NUL byte in an argument")
		}
	}
	for _, e := range c.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || strings.IndexByte(e.Value, 0) >= 0 {
			return bad("malformed environment entry")
		}
	}
	return nil
}

// envNames returns the names of the env entries.
func (c Cmd) envNames() []string {
	names := make([]string, len(c.Env))
	for i, e := range c.Env {
		names[i] = e.Name
	}
	return names
}

// String returns the command line, followed by the env names if any.
func (c Cmd) String() string {
	if len(c.Env) == 0 {
		return c.Line()
	}
	return c.Line() + " (env: " + strings.Join(c.envNames(), ", ") + ")"
}

// GoString returns a Go-syntax form that omits env values.
func (c Cmd) GoString() string {
	return fmt.Sprintf("paddock.Cmd{Path:%q, Args:%#v, Env:<%d names>, Dir:%q}", c.Path, c.Args, len(c.Env), c.Dir)
}

// Format prints the command for every fmt verb without env values.
func (c Cmd) Format(f fmt.State, verb rune) { formatSafe(f, verb, c.String(), c.GoString()) }

// MarshalZerologObject logs the path, the argument count and the env names.
func (c Cmd) MarshalZerologObject(e *zerolog.Event) {
	e.Str("path", c.Path).Int("args", len(c.Args)).Strs("env", c.envNames())
	if c.Dir != "" {
		e.Str("dir", c.Dir)
	}
}

// LogValue logs the command line and env names through log/slog.
func (c Cmd) LogValue() slog.Value { return slog.StringValue(c.String()) }
