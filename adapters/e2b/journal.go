package e2b

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paddockhq/paddock"
)

// Journals: envd keeps no output for late subscribers, so a detachable
// spawn runs under a wrapper that copies its stdout and stderr into files
// of its session and records its exit code after both copies are whole.
// An attach replays the files from byte zero and follows them until the
// exit record appears; the record is written last, so its presence (not a
// timer) says the output is complete.

// journalRoot is where sessions live, relative to the user's home (envd
// resolves relative paths there, and the wrapper reads $HOME).
const journalRoot = ".paddock/sessions"

// journalDir is a session's directory, relative to the home.
func journalDir(id string) string { return journalRoot + "/" + id }

// newSessionID returns a fresh session id (also the process's tag).
func newSessionID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return sessionPrefix + hex.EncodeToString(b)
}

// sessionPrefix starts every session id (and the tag of its process).
const sessionPrefix = "paddock-"

// journalScript is the wrapper of a detachable spawn, for sh -c. Its
// positional parameters are the session id, the command line for listings,
// then the command's argv, each base64-encoded, so every byte of every
// argument (quotes, $, backslashes, newlines, non-UTF-8) reaches the
// command exactly. The command's stdout and stderr pass through tee into
// the journal; the exit record is written once both copies ended.
const journalScript = `
dec() { v=$(printf %s "$1" | base64 -d; printf x); printf %s "${v%x}"; }
d="$HOME/` + journalRoot + `/$(dec "$1")"
mkdir -p "$d" || exit 125
dec "$2" > "$d/cmd"
shift 2
for a do v=$(printf %s "$a" | base64 -d; printf x); set -- "$@" "${v%x}"; shift; done
rm -f "$d/o.fifo" "$d/e.fifo"
mkfifo "$d/o.fifo" "$d/e.fifo" || exit 125
tee -a "$d/out" < "$d/o.fifo" & t1=$!
tee -a "$d/err" < "$d/e.fifo" >&2 & t2=$!
"$@" > "$d/o.fifo" 2> "$d/e.fifo"
c=$?
wait $t1 $t2
rm -f "$d/o.fifo" "$d/e.fifo"
printf '%s\n' "$c" > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
exit $c
`

// journalCmd wraps cmd in the journal of session id.
func journalCmd(id string, cmd paddock.Cmd) paddock.Cmd {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	args := []string{"-c", journalScript, "paddock-journal", enc(id), enc(cmd.Line())}
	for _, a := range cmd.Argv() {
		args = append(args, enc(a))
	}
	return paddock.Cmd{Path: "/bin/sh", Args: args, Env: cmd.Env, Dir: cmd.Dir}
}

// textOnly reports whether cmd can travel as envd's JSON strings as it is
// (protobuf strings are UTF-8); otherwise it runs through the journal's
// decoding.
func textOnly(cmd paddock.Cmd) bool {
	for _, s := range cmd.Argv() {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return utf8.ValidString(cmd.Dir)
}

// parseExit reads an exit record: a decimal code and a newline. A missing
// newline is a record still being written; anything else is garbled.
func parseExit(b []byte) (int, bool) {
	line, ok := bytes.CutSuffix(b, []byte("\n"))
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || n < 0 || n > 255 {
		return 0, false
	}
	return n, true
}
