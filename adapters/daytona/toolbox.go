package daytona

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// The toolbox: the daemon in each sandbox, reached through the proxy at
// the sandbox's toolbox URL with the same Bearer key. Every call asks for
// split output (X-Daytona-Split-Output: true), so journals come raw, with
// their stream markers.

// toolbox is one sandbox's toolbox API.
type toolbox struct {
	a    *Adapter
	rest *httpx.REST
}

// toolboxOf starts the sandbox if it is not running and answers its
// toolbox.
func (a *Adapter) toolboxOf(ctx context.Context, h paddock.Handle) (*toolbox, error) {
	sb, err := a.started(ctx, h)
	if err != nil {
		return nil, err
	}
	base, err := a.toolboxURL(ctx, sb)
	if err != nil {
		return nil, err
	}
	return a.toolboxAt(base), nil
}

// toolboxAt is the toolbox at base.
func (a *Adapter) toolboxAt(base string) *toolbox {
	return &toolbox{a: a, rest: &httpx.REST{Provider: paddock.ProviderDaytona, BaseURL: base, MaxBody: maxBody, Log: a.log,
		Authorize: func(req *http.Request) error {
			if err := a.authorize(req); err != nil {
				return err
			}
			req.Header.Set("X-Daytona-Split-Output", "true")
			return nil
		}}}
}

// quote is s as one single-quoted shell word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// commandLine renders cmd as one shell command: cd to its directory, its
// environment as assignments, every word quoted.
func commandLine(cmd paddock.Cmd) string {
	var b strings.Builder
	if cmd.Dir != "" {
		b.WriteString("cd " + quote(cmd.Dir) + " && ")
	}
	for _, e := range cmd.Env {
		b.WriteString(e.Name + "=" + quote(e.Value) + " ")
	}
	b.WriteString(quote(cmd.Path))
	for _, arg := range cmd.Args {
		b.WriteString(" " + quote(arg))
	}
	return b.String()
}

// textOnly reports whether every word of cmd is UTF-8 text: the toolbox
// takes commands as JSON strings.
func textOnly(cmd paddock.Cmd) bool {
	if !utf8.ValidString(cmd.Path) || !utf8.ValidString(cmd.Dir) {
		return false
	}
	for _, a := range cmd.Args {
		if !utf8.ValidString(a) {
			return false
		}
	}
	for _, e := range cmd.Env {
		if !utf8.ValidString(e.Value) {
			return false
		}
	}
	return true
}
