package daytona

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"math"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock"
)

// newBoundary is a line no base64 text contains.
func newBoundary() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "--paddock-" + hex.EncodeToString(b) + "--"
}

// execScript runs cmdLine with stdin closed, its stdout and stderr (or
// both, merged) into files, then prints each base64-encoded around the
// boundary, so bytes survive the JSON answer exactly; it ends with the
// command's own exit code. (The toolbox feeds the script to the shell on
// stdin, hence </dev/null for the command.)
func execScript(cmdLine, boundary string, merge bool) string {
	redirect := `>"$__o" 2>"$__e"`
	if merge {
		redirect = `>"$__o" 2>&1`
	}
	return `__o=$(mktemp) && __e=$(mktemp) || exit 125
{ ` + cmdLine + `
} ` + redirect + ` </dev/null
__c=$?
base64 "$__o"; printf '\n%s\n' '` + boundary + `'; base64 "$__e"
rm -f "$__o" "$__e"
exit $__c`
}

// Exec runs cmd to completion through /process/execute under one
// deadline: the daemon kills it at the timeout too. Output is held up to
// the cap; the exit code is the command's own.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(ctx, cmd, opts, a.cfg.Exec, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	if !textOnly(cmd) {
		return paddock.ExecResult{}, &paddock.InvalidError{Detail: paddock.DetailCommand + ": Daytona carries commands as UTF-8 text"}
	}
	ctx, cancel := dl.Context(ctx)
	defer cancel()
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return paddock.ExecResult{}, execError(dl, err)
	}
	// The environment goes in the daemon's own field, envs (the shell
	// passes it on); the rest is one quoted command line.
	bare := cmd
	bare.Env = nil
	boundary := newBoundary()
	body := map[string]any{"command": execScript(commandLine(bare), boundary, opts.StderrToStdout)}
	if len(cmd.Env) > 0 {
		envs := map[string]string{}
		for _, e := range cmd.Env {
			envs[e.Name] = e.Value // a later name wins
		}
		body["envs"] = envs
	}
	if dl.Finite() {
		body["timeout"] = max(int(math.Ceil(dl.Remaining().Seconds())), 1)
	}
	// The answer holds the output base64-encoded: allow for that.
	rest := *tb.rest
	rest.MaxBody = opts.OutputCap()*4/3 + 1<<20
	status, header, data, err := rest.Call(ctx, a.streaming, http.MethodPost, "/process/execute", nil, body)
	switch {
	case err != nil:
		return paddock.ExecResult{}, execError(dl, err)
	case status == http.StatusRequestTimeout:
		return paddock.ExecResult{}, dl.Err()
	case status != http.StatusOK:
		return paddock.ExecResult{}, execError(dl, rest.StatusError(status, header, data))
	}
	if dl.Finite() && dl.Expired() {
		return paddock.ExecResult{}, dl.Err()
	}
	var res struct {
		ExitCode *int   `json:"exitCode"`
		Result   string `json:"result"`
	}
	if err := rest.Decode(data, &res); err != nil {
		return paddock.ExecResult{}, err
	}
	if res.ExitCode == nil || *res.ExitCode < 0 {
		return paddock.ExecResult{}, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "execute answered no exit code: " + clip(res.Result)}
	}
	stdout, stderr, ok := splitExec(res.Result, boundary)
	if !ok {
		if *res.ExitCode == 125 {
			return paddock.ExecResult{}, &paddock.UnavailableError{Detail: "daytona: the exec wrapper could not start: " + clip(res.Result)}
		}
		return paddock.ExecResult{}, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "execute answered output the wrapper did not write"}
	}
	if err := out.Add(paddock.EventStdout, stdout); err != nil {
		return paddock.ExecResult{}, err
	}
	if err := out.Add(paddock.EventStderr, stderr); err != nil {
		return paddock.ExecResult{}, err
	}
	return out.Result(*res.ExitCode), nil
}

// splitExec decodes the wrapper's answer: base64 stdout, the boundary
// line, base64 stderr.
func splitExec(result, boundary string) (stdout, stderr []byte, ok bool) {
	before, after, found := strings.Cut(result, "\n"+boundary+"\n")
	if !found {
		return nil, nil, false
	}
	dec := func(s string) ([]byte, bool) {
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		return b, err == nil
	}
	stdout, ok1 := dec(before)
	stderr, ok2 := dec(after)
	return stdout, stderr, ok1 && ok2
}

// clip shortens a provider's text for an error.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// execError is the deadline's error once it passed, else err.
func execError(dl paddock.ExecDeadline, err error) error {
	if dl.Finite() && dl.Expired() {
		return dl.Err()
	}
	return err
}

// ExecLimits are the bounds of Exec's timeouts the adapter was configured
// with, under which the runtime fixes each exec's deadline.
func (a *Adapter) ExecLimits() paddock.ExecLimits { return a.cfg.Exec }
