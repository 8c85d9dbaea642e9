package daytona

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock"
)

// newBoundary is a line no base64 text contains.
func newBoundary() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "--paddock-" + hex.EncodeToString(b) + "--"
}

// execScript runs cmdLine (which execs the command) with stdin closed and
// its stdout and stderr (or both, merged) through FIFOs into files, each
// held to limit bytes by a head, then prints each base64-encoded around
// the boundary, so bytes survive the JSON answer exactly; it ends with the
// command's own exit code once its output ended. A stream that reaches
// limit kills the command at once, so neither the disk nor the wait grows
// past the cap: the adapter asks for a byte more than its cap, and a file
// that holds it is the output limit. Past its setup the script's own
// stderr is discarded: the answer merges it into the output, and a shell
// reports the killed job there. (The toolbox feeds the script to the
// shell on stdin, hence </dev/null for the command.)
func execScript(cmdLine, boundary string, merge bool, limit int64) string {
	n := strconv.FormatInt(limit, 10)
	redirect, heads := `>"$__d/po" 2>"$__d/pe"`, `__held "$__d/o" <"$__d/po" & __ho=$!
__held "$__d/e" <"$__d/pe" & __he=$!
wait $__ho $__he`
	if merge {
		redirect, heads = `>"$__d/po" 2>&1`, `: >"$__d/e"
__held "$__d/o" <"$__d/po" & __ho=$!
wait $__ho`
	}
	return `__d=$(mktemp -d) && mkfifo "$__d/po" "$__d/pe" || exit 125
exec 2>/dev/null
{ ` + cmdLine + `
} ` + redirect + ` </dev/null & __p=$!
__held() { head -c ` + n + ` >"$1"; [ "$(wc -c <"$1")" -lt ` + n + ` ] || kill -KILL $__p 2>/dev/null; }
` + heads + `
wait $__p; __c=$?
base64 "$__d/o"; printf '\n%s\n' '` + boundary + `'; base64 "$__d/e"
rm -rf "$__d"
exit $__c`
}

// execLine is cmd's command line with its program exec'd, so the
// script's background job is the command itself and a kill reaches it.
func execLine(cmd paddock.Cmd) string {
	dir := cmd.Dir
	cmd.Dir = ""
	line := "exec " + commandLine(cmd)
	if dir != "" {
		line = "cd " + quote(dir) + " && " + line
	}
	return line
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
	body := map[string]any{"command": execScript(execLine(bare), boundary, opts.StderrToStdout, opts.OutputCap()+1)}
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
	// The answer holds both files, each up to a byte over the cap,
	// base64-encoded: allow for that.
	rest := *tb.rest
	rest.MaxBody = (2*opts.OutputCap()+2)*4/3 + 1<<20
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
