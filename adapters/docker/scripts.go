package docker

// The shell the adapter runs inside sandboxes. Every script is run as
// `sh -c SCRIPT paddock ARG...`: caller data only ever arrives as
// positional arguments, never spliced into the script text. Variables are
// prefixed _pd_ so a caller's environment is not disturbed, and PATH is
// extended for the scripts' own tools but restored for the caller's
// command. They need only a POSIX sh with busybox-level tools.

// pathPrelude keeps the caller's PATH and finds the scripts' own tools.
const pathPrelude = `_pd_upath=$PATH; PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH; `

// scriptSelfCheck: the scratch mounts must be writable by the sandbox
// user (an image that has /tmp or /workspace gives the mount its own
// directory's mode; the mount's owner is the sandbox user, so only a
// mode without the owner's write fails).
const scriptSelfCheck = pathPrelude + `for _pd_p in /tmp /workspace; do
  [ -w "$_pd_p" ] || { echo "$_pd_p is not writable by uid $(id -u): the image's $_pd_p has a mode without the owner's write permission" >&2; exit 1; }
done`

// scriptSession starts a journaled session and then runs it: the exec it
// runs in is the session's runner. It prints "started ID" (or "existing
// ID" when name is live already) once the command has its pid, and then
// lets go of the exec's output, so the adapter reads that line to its end
// while the runner goes on. The runner is the exec's own process, never a
// shell's background job, and it runs the command in the foreground: a
// background job of a shell ignores INT and QUIT, and no shell can undo
// that for what it starts, so the command would not be interruptible. The
// command gets a session (and process group) of its own, so signals to
// the group spare the runner, which journals its output and records its
// exit code.
// Args: base id name stdin(0|1) created ARGV...
const scriptSession = pathPrelude + `_pd_b=$1 _pd_id=$2 _pd_name=$3 _pd_in=$4 _pd_created=$5; shift 5
mkdir -p "$_pd_b/s" "$_pd_b/n" || exit 120
if [ -n "$_pd_name" ]; then
  _pd_i=0
  until mkdir "$_pd_b/n/$_pd_name.lock" 2>/dev/null; do
    _pd_i=$((_pd_i+1)); [ $_pd_i -gt 300 ] && rm -rf "$_pd_b/n/$_pd_name.lock"; sleep 0.01
  done
  if [ -f "$_pd_b/n/$_pd_name" ]; then
    _pd_old=$(cat "$_pd_b/n/$_pd_name")
    if [ -d "$_pd_b/s/$_pd_old" ] && [ ! -e "$_pd_b/s/$_pd_old/exit" ] && kill -0 "$(cat "$_pd_b/s/$_pd_old/runner" 2>/dev/null)" 2>/dev/null; then
      rmdir "$_pd_b/n/$_pd_name.lock"; echo "existing $_pd_old"; exit 0
    fi
  fi
fi
_pd_d=$_pd_b/s/$_pd_id
mkdir "$_pd_d" || exit 121
echo $$ > "$_pd_d/runner"
: > "$_pd_d/stdout"; : > "$_pd_d/stderr"
printf '%s' "$_pd_created" > "$_pd_d/created"
printf '%s' "$*" > "$_pd_d/cmd"
[ -n "$_pd_name" ] && printf '%s' "$_pd_name" > "$_pd_d/name"
[ "$_pd_in" = 1 ] && { mkfifo "$_pd_d/stdin" || exit 122; }
{
  until [ -s "$_pd_d/pid" ] || [ -e "$_pd_d/exit" ]; do sleep 0.002; done
  [ -n "$_pd_name" ] && { echo "$_pd_id" > "$_pd_b/n/$_pd_name"; rmdir "$_pd_b/n/$_pd_name.lock"; }
  echo "started $_pd_id"
} &
exec > /dev/null 2>&1
_pd_setsid=$(command -v setsid)
_pd_src=/dev/null _pd_h=
if [ "$_pd_in" = 1 ]; then
  sleep 2147483647 > "$_pd_d/stdin" &
  _pd_h=$!
  echo $_pd_h > "$_pd_d/holder"
  _pd_src=$_pd_d/stdin
fi
( exec "$_pd_setsid" sh -c 'echo $$ > "$1/pid.tmp" && mv "$1/pid.tmp" "$1/pid" || exit 125; PATH=$2; shift 2; exec "$@"' \
    paddock "$_pd_d" "$_pd_upath" "$@" ) < "$_pd_src" >> "$_pd_d/stdout" 2>> "$_pd_d/stderr"
_pd_x=$?
[ -n "$_pd_h" ] && kill $_pd_h 2>/dev/null
[ -f "$_pd_d/writers" ] && kill $(cat "$_pd_d/writers") 2>/dev/null
echo $_pd_x > "$_pd_d/exit.tmp" && mv "$_pd_d/exit.tmp" "$_pd_d/exit"`

// scriptFollow streams a session's journal from the given offsets
// (stdout to stdout, stderr to stderr) until the session has ended and
// all of it is sent, then exits 0; it polls, quickly while output flows,
// slowly when idle, and ends too when the runner is gone without
// recording an exit. Its first bytes are followReady on stdout, so that
// what an exec the engine could not start says is never taken for the
// journal; its shell's own complaints go nowhere, so that a fork refused
// at the sandbox's process limit ends it (a non-zero exit: the stream
// starts another at the bytes it has) without a word in the journal.
// Args: dir, stdout offset, stderr offset
const scriptFollow = pathPrelude + `_pd_d=$1 _pd_o=$2 _pd_e=$3 _pd_s=0.005
printf '%s\n' ` + followReadyWord + `
exec 3>&2 2>/dev/null
while :; do
  _pd_fin=0
  [ -e "$_pd_d/exit" ] && _pd_fin=1
  if [ $_pd_fin = 0 ] && ! kill -0 "$(cat "$_pd_d/runner")"; then
    [ -e "$_pd_d/exit" ] && _pd_fin=1 || _pd_fin=2
  fi
  _pd_m=0
  _pd_n=$(stat -c %s "$_pd_d/stdout") || exit 3
  if [ "$_pd_n" -gt "$_pd_o" ]; then tail -c +$((_pd_o+1)) "$_pd_d/stdout" | head -c $((_pd_n-_pd_o)) || exit 3; _pd_o=$_pd_n; _pd_m=1; fi
  _pd_n=$(stat -c %s "$_pd_d/stderr") || exit 3
  if [ "$_pd_n" -gt "$_pd_e" ]; then tail -c +$((_pd_e+1)) "$_pd_d/stderr" | head -c $((_pd_n-_pd_e)) >&3 || exit 3; _pd_e=$_pd_n; _pd_m=1; fi
  [ $_pd_fin != 0 ] && exit 0
  if [ $_pd_m = 1 ]; then _pd_s=0.005; else
    case $_pd_s in 0.005) _pd_s=0.01;; 0.01) _pd_s=0.02;; 0.02) _pd_s=0.05;; 0.05) _pd_s=0.1;; 0.1) _pd_s=0.25;; esac
  fi
  sleep $_pd_s || exit 3
done`

// followReadyWord is the line scriptFollow prints before the journal.
const followReadyWord = "paddock-follow"

// followReady is what a follower's stdout starts with.
const followReady = followReadyWord + "\n"

// scriptResult prints a session's recorded exit code, or nothing.
// Args: dir
const scriptResult = `[ -e "$1/reason" ] && { printf 'reason '; cat "$1/reason"; exit 0; }
[ -e "$1/exit" ] && cat "$1/exit"; exit 0`

// scriptProbe says whether a session exists and how: "ok", "tty" or
// "missing". Args: dir
const scriptProbe = `if [ ! -d "$1" ]; then echo missing; elif [ -e "$1/tty" ]; then echo tty; else echo ok; fi`

// scriptWriter copies its stdin into a session's stdin (opened read-write,
// so it never blocks waiting for a reader) and registers itself so the
// runner can end it.
// Args: dir
const scriptWriter = pathPrelude + `[ -p "$1/stdin" ] || { echo "the session has no stdin" >&2; exit 3; }
[ -e "$1/exit" ] && { echo "the session has ended" >&2; exit 4; }
echo $$ >> "$1/writers"
exec cat 1<> "$1/stdin"`

// scriptCloseStdin ends a session's stdin: the holder that kept it open
// goes, so the command reads end-of-file once the writers are done.
// Args: dir
const scriptCloseStdin = `[ -f "$1/holder" ] && kill "$(cat "$1/holder")" 2>/dev/null; exit 0`

// scriptTTY runs a terminal session directly under the exec's TTY (it is
// listed, not journaled). Its pid (the command's, which it becomes) is
// recorded first, so the session can be signalled and terminated as soon
// as Spawn returns (Spawn waits for it: scriptTTYStarted). The engine
// sizes the terminal once the exec has started, so the command is started
// only when the terminal has the size asked for (given up on after 5 s,
// or at once without stty).
// Args: base id created rows cols ARGV...
const scriptTTY = pathPrelude + `_pd_d=$1/s/$2
mkdir -p "$_pd_d" && : > "$_pd_d/tty" && printf '%s' "$3" > "$_pd_d/created" || exit 120
_pd_want="$4 $5"
shift 5
printf '%s' "$*" > "$_pd_d/cmd"
echo $$ > "$_pd_d/pid.tmp" && mv "$_pd_d/pid.tmp" "$_pd_d/pid" || exit 120
if command -v stty >/dev/null; then
  _pd_i=0
  until [ "$(stty size 2>/dev/null)" = "$_pd_want" ] || [ $_pd_i -ge 500 ]; do _pd_i=$((_pd_i+1)); sleep 0.01; done
fi
PATH=$_pd_upath exec "$@"`

// scriptTTYStarted waits until a terminal session has recorded its pid;
// exit 4 when it has not within 60 s (its script failed before).
// Args: dir
const scriptTTYStarted = `_pd_t=0
until [ -s "$1/pid" ]; do
  [ $_pd_t -ge 30000 ] && exit 4
  _pd_t=$((_pd_t+1)); sleep 0.002
done`

// scriptList prints each session: "ID CREATED TTY MTIME LEN STATE [NAME]"
// (the name of a named spawn: a session id's characters, no blank) then
// LEN bytes of its command line. STATE is exit:CODE once the exit is
// recorded, running while its runner (a TTY session's command) lives,
// ended for a TTY session gone, and lost for a runner gone without
// recording an exit (the exit is looked for again after the runner is
// found gone, as the runner records it just before it ends).
// Args: base
const scriptList = pathPrelude + `cd "$1/s" 2>/dev/null || exit 0
for _pd_s in *; do
  [ -f "$_pd_s/cmd" ] || continue
  _pd_t=0; [ -e "$_pd_s/tty" ] && _pd_t=1
  _pd_m=$(stat -c %Y "$_pd_s/cmd" "$_pd_s/stdout" "$_pd_s/stderr" 2>/dev/null | sort -n | tail -n 1)
  if [ $_pd_t = 1 ]; then
    kill -0 "$(cat "$_pd_s/pid" 2>/dev/null)" 2>/dev/null && _pd_st=running || _pd_st=ended
  elif [ ! -e "$_pd_s/exit" ] && kill -0 "$(cat "$_pd_s/runner" 2>/dev/null)" 2>/dev/null; then
    _pd_st=running
  elif [ -e "$_pd_s/exit" ]; then
    _pd_st=exit:$(cat "$_pd_s/exit")
  else
    _pd_st=lost
  fi
  echo "$_pd_s $(cat "$_pd_s/created" 2>/dev/null || echo 0) $_pd_t ${_pd_m:-0} $(wc -c < "$_pd_s/cmd") $_pd_st $(cat "$_pd_s/name" 2>/dev/null)"
  cat "$_pd_s/cmd"
done`

// scriptTerminate stops a session's process group: SIGTERM, up to the
// timeout, then SIGKILL (force: SIGKILL at once), and succeeds only when
// no process of the group is left. Exit 0 done (or already ended), 3 no
// such session, 4 not confirmed. Args: dir mode timeout-ms
const scriptTerminate = pathPrelude + `_pd_d=$1
[ -d "$_pd_d" ] || exit 3
[ -e "$_pd_d/exit" ] && exit 0
_pd_pg=$(cat "$_pd_d/pid" 2>/dev/null)
[ -n "$_pd_pg" ] || exit 4
_pd_gone() { ! kill -0 -$_pd_pg 2>/dev/null; }
if [ "$2" = force ]; then
  kill -KILL -$_pd_pg 2>/dev/null
else
  kill -TERM -$_pd_pg 2>/dev/null
  _pd_t=0
  while ! _pd_gone && [ $_pd_t -lt "$3" ]; do sleep 0.01; _pd_t=$((_pd_t+10)); done
  _pd_gone || kill -KILL -$_pd_pg 2>/dev/null
fi
_pd_t=0
while ! _pd_gone && [ $_pd_t -lt 3000 ]; do sleep 0.01; _pd_t=$((_pd_t+10)); done
_pd_gone || exit 4
_pd_t=0
while [ ! -e "$_pd_d/exit" ] && kill -0 "$(cat "$_pd_d/runner" 2>/dev/null)" 2>/dev/null && [ $_pd_t -lt 2000 ]; do sleep 0.01; _pd_t=$((_pd_t+10)); done
exit 0`

// scriptExecKill kills every process of one Exec (they carry its token in
// their environment, whatever group or session they moved to).
// Args: token
const scriptExecKill = pathPrelude + `for _pd_p in /proc/[0-9]*; do
  tr '\0' '\n' < "$_pd_p/environ" 2>/dev/null | grep -qx "PADDOCK_EXEC=$1" && kill -KILL "${_pd_p#/proc/}" 2>/dev/null
done
exit 0`

// scriptStageFile writes stdin to a staging file beside a path, creating
// the parents, and prints how many bytes it holds: the adapter commits it
// only when that is every byte it sent. A directory at the path is exit 2.
// Args: path staging
const scriptStageFile = pathPrelude + `[ -d "$1" ] && { echo "a directory is at the path" >&2; exit 2; }
mkdir -p "$(dirname "$1")" && cat > "$2" && wc -c < "$2" || { _pd_c=$?; rm -f "$2"; exit $_pd_c; }`

// scriptCommitFile gives a staged file its mode and renames it over its
// path. Args: path mode(octal) staging
const scriptCommitFile = pathPrelude + `[ -d "$1" ] && { rm -f "$3"; echo "a directory is at the path" >&2; exit 2; }
chmod "$2" "$3" && mv -f "$3" "$1" || { _pd_c=$?; rm -f "$3"; exit $_pd_c; }`

// scriptExec runs its arguments as the command, the shell replaced by it:
// a program that cannot run is the shell's 127 (not found) or 126 (not
// executable) with the reason on stderr, as on every adapter, where the
// engine's own exec answers 126 for both with the OCI runtime's message
// on stdout. Args: the command's argv
const scriptExec = `exec "$@"`

// scriptDiscard removes a staged file. Args: staging
const scriptDiscard = `rm -f "$1"`

// scriptReadFile streams a regular file; exit 3 when there is none.
// Args: path
const scriptReadFile = pathPrelude + `[ -f "$1" ] || exit 3
exec cat "$1"`

// scriptStamp records activity (run as root, in the root-owned state
// directory the sandbox user cannot write). Args: unix-nanoseconds
const scriptStamp = `printf '%s' "$1" > ` + stampFile

// scriptClaim records the owner of a sandbox and its lease's end (as
// root), over the labels written at creation. Args: owner, lease end
// (RFC 3339, or empty for none)
const scriptClaim = `printf '%s' "$1" > ` + stateDir + `/owner && printf '%s' "$2" > ` + stateDir + `/lease-until`

// scriptState prints the activity stamp, the owner override and the
// lease's end, a line each (empty when absent).
const scriptState = `cat ` + stampFile + ` 2>/dev/null; echo; cat ` + stateDir + `/owner 2>/dev/null; echo; cat ` + stateDir + `/lease-until 2>/dev/null; echo`

// scriptDial relays stdin and stdout to a port on the sandbox's loopback.
// Args: port
const scriptDial = pathPrelude + `command -v nc >/dev/null 2>&1 || { echo "preview: the image has no nc" >&2; exit 127; }
exec nc 127.0.0.1 "$1"`

// sh builds the argv running script with args.
func sh(script string, args ...string) []string {
	return append([]string{"/bin/sh", "-c", script, "paddock"}, args...)
}

// scriptSignal sends a signal to a live session's process group. Exit 0
// sent, 3 no such session, 4 the session has ended.
// Args: dir signal-name
const scriptSignal = pathPrelude + `[ -d "$1" ] || exit 3
[ -e "$1/exit" ] && exit 4
_pd_pg=$(cat "$1/pid" 2>/dev/null)
[ -n "$_pd_pg" ] || exit 4
kill -"$2" -"$_pd_pg" 2>/dev/null || exit 4`

// The file operations' scripts exit 3 when the path (or a parent it
// needs) is absent, 4 when the request does not fit what is there (not a
// directory, a directory with entries), 6 when something already exists,
// and otherwise with the tool's own failure on stderr.

// scriptDescribe prints one file as "MODE-HEX SIZE MTIME NAMELEN
// TARGETLEN" then the name and the link target. Args: path name
const scriptDescribe = `_pd_describe() {
  _pd_m=$(stat -c '%f %s %Y' "$1") || return 1
  _pd_t=; [ -L "$1" ] && _pd_t=$(readlink "$1")
  printf '%s %s %s\n%s%s' "$_pd_m" "${#2}" "${#_pd_t}" "$2" "$_pd_t"
}
`

// scriptStat describes one file, itself when it is a link. Args: path
const scriptStat = pathPrelude + `LC_ALL=C
` + scriptDescribe + `[ -e "$1" ] || [ -L "$1" ] || exit 3
_pd_describe "$1" "${1##*/}"`

// scriptListDir describes each entry of a directory (hidden ones too).
// Args: dir
const scriptListDir = pathPrelude + `LC_ALL=C
` + scriptDescribe + `[ -e "$1" ] || [ -L "$1" ] || exit 3
[ -d "$1" ] || exit 4
cd "$1" || exit 5
for _pd_f in * .*; do
  case $_pd_f in .|..) continue;; esac
  [ -e "$_pd_f" ] || [ -L "$_pd_f" ] || continue
  _pd_describe "./$_pd_f" "$_pd_f" || exit 5
done`

// scriptRemove removes a file or directory. Args: path recursive(0|1)
const scriptRemove = pathPrelude + `[ -e "$1" ] || [ -L "$1" ] || exit 3
if [ -d "$1" ] && [ ! -L "$1" ]; then
  if [ "$2" = 1 ]; then rm -rf "$1" || exit 5
  else rmdir "$1" 2>/dev/null && exit 0; [ -n "$(ls -A "$1" 2>/dev/null)" ] && exit 4; rmdir "$1" || exit 5; fi
else rm -f "$1" || exit 5; fi`

// scriptRename moves a file or directory as rename(2) does: a file at the
// destination is replaced, an empty directory too when a directory
// arrives. Args: from to
const scriptRename = pathPrelude + `[ -e "$1" ] || [ -L "$1" ] || exit 3
_pd_p=${2%/*}
[ -d "${_pd_p:-/}" ] || exit 3
if [ -d "$2" ] && [ ! -L "$2" ]; then
  { [ -d "$1" ] && [ ! -L "$1" ]; } || exit 4
  rmdir "$2" 2>/dev/null || exit 4
fi
mv -f "$1" "$2" || exit 5`

// scriptMakeDir makes a directory with a mode (exactly, past the umask).
// Args: path mode-octal parents(0|1)
const scriptMakeDir = pathPrelude + `if [ -e "$1" ] || [ -L "$1" ]; then
  [ "$3" = 1 ] && [ -d "$1" ] && exit 0
  exit 6
fi
_pd_p=${1%/*}
if [ "$3" = 1 ]; then mkdir -p "${_pd_p:-/}" || exit 5
else [ -d "${_pd_p:-/}" ] || exit 3; fi
mkdir -m "$2" "$1" || exit 5`

// scriptWatch runs paddock-watch on a directory. Exit 3 absent, 4 not a
// directory, 5 no paddock-watch in the image; then paddock-watch's own
// codes. Args: dir
const scriptWatch = pathPrelude + `[ -e "$1" ] || [ -L "$1" ] || exit 3
[ -d "$1" ] || exit 4
command -v paddock-watch >/dev/null || exit 5
exec paddock-watch "$1"`

// scratchEntries sets the positional parameters to the entries of the
// scratch mounts a checkpoint holds, as paths from /: /tmp's (but the
// session journals) and /workspace itself. Names of any bytes pass whole.
const scratchEntries = `set --
for _pd_f in /tmp/* /tmp/.[!.]* /tmp/..?*; do
  { [ -e "$_pd_f" ] || [ -L "$_pd_f" ]; } || continue
  [ "$_pd_f" = ` + sessionBase + ` ] && continue
  set -- "$@" "${_pd_f#/}"
done
`

// scriptArchive writes the scratch space a checkpoint holds to stdout as
// a tar archive (run as the sandbox user), with every other process of
// the sandbox user stopped from before it lists the scratch space until
// it is done, so the archive is one moment's files; they are continued
// however it ends. kill -1 reaches all of them but the caller and the
// container's init (root's, the egress relay's, are out of its reach); a
// process forked while it was sent, or not yet stopped, is found by the
// pass that follows, which sends it again, until a pass finds every one
// stopped (or after 2000 passes, when what is still running is left to
// run).
const scriptArchive = pathPrelude + `trap 'kill -CONT -1 2>/dev/null' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM
_pd_pass=0
while [ $_pd_pass -lt 2000 ]; do
  _pd_pass=$((_pd_pass+1))
  kill -STOP -1 2>/dev/null
  _pd_running=
  for _pd_p in /proc/[0-9]*; do
    case ${_pd_p#/proc/} in 1|$$) continue ;; esac
    kill -0 "${_pd_p#/proc/}" 2>/dev/null || continue
    read -r _pd_stat < "$_pd_p/stat" 2>/dev/null || continue
    _pd_state=${_pd_stat##*) }
    case ${_pd_state%% *} in T|t|Z|X) ;; *) _pd_running=1; break ;; esac
  done
  [ -z "$_pd_running" ] && break
done
` + scratchEntries + `cd / || exit 1
tar -c -f - "$@" workspace
exit $?`

// scriptUnarchive empties the scratch space (the session journals kept)
// and extracts the tar archive on stdin there, modes exactly (umask 0).
// Exit 3: what was there could not be removed.
const scriptUnarchive = pathPrelude + scriptUnarchiveBody

// scriptUnarchiveBody is scriptUnarchive's work: the archive is stdin, or
// the file $_pd_archive names.
const scriptUnarchiveBody = scratchEntries + `for _pd_w in /workspace/* /workspace/.[!.]* /workspace/..?*; do
  { [ -e "$_pd_w" ] || [ -L "$_pd_w" ]; } && set -- "$@" "${_pd_w#/}"
done
cd / || exit 3
for _pd_f in "$@"; do
  [ -d "$_pd_f" ] && [ ! -L "$_pd_f" ] && chmod -R u+w -- "$_pd_f" 2>/dev/null
  rm -rf -- "$_pd_f" || exit 3
done
umask 0
exec tar -x -f "${_pd_archive:--}"`

// scriptUnarchiveSeed is scriptUnarchive from the fork's mounted archive
// instead of stdin, once it is seen to be the archive meant (its size, the
// first argument) and readable by the sandbox user. Exit 4: it is not (an
// engine on another machine, whose file at that path is another or none).
const scriptUnarchiveSeed = pathPrelude + `_pd_size=$1
set -- $(ls -ln ` + seedArchive + ` 2>/dev/null) ""
[ "$5" = "$_pd_size" ] && [ -r ` + seedArchive + ` ] || exit 4
_pd_archive=` + seedArchive + `
` + scriptUnarchiveBody

// scriptStopCommands stops every command of the sandbox for a reason: each
// live journaled session is marked with it (its terminal frame says it)
// and its process group killed, and every exec's processes are killed.
// Args: base, reason
const scriptStopCommands = pathPrelude + `for _pd_d in "$1"/s/*; do
  [ -d "$_pd_d" ] && [ ! -e "$_pd_d/exit" ] || continue
  printf '%s' "$2" > "$_pd_d/reason"
  _pd_p=$(cat "$_pd_d/pid" 2>/dev/null) && [ -n "$_pd_p" ] && kill -KILL -"$_pd_p" 2>/dev/null
done
for _pd_e in /proc/[0-9]*; do
  grep -q PADDOCK_EXEC= "$_pd_e/environ" 2>/dev/null && kill -KILL "${_pd_e#/proc/}" 2>/dev/null
done
exit 0`
