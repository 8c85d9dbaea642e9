package docker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
)

// Spawn starts cmd as a detachable session and streams it. Without a TTY
// the session is journaled in the sandbox's scratch space (Attach replays
// it from byte zero, live or finished); a named spawn whose name is live
// returns that session, replayed, instead of starting another. With a TTY
// the command runs on the exec's terminal: listed and terminable, not
// journaled, so it cannot be re-attached.
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	created := strconv.FormatInt(time.Now().UnixNano(), 10)
	id := randomID()
	if opts.TTY {
		if opts.Name != "" {
			return nil, &paddock.InvalidError{Detail: paddock.DetailSpawnOptions + ": docker names only journaled (non-TTY) sessions"}
		}
		size := paddock.TermSize{Cols: 80, Rows: 24}
		if opts.Size != nil {
			size = *opts.Size
		}
		args := append([]string{sessionBase, id, created, strconv.Itoa(size.Rows), strconv.Itoa(size.Cols)}, cmd.Argv()...)
		x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptTTY, args...),
			env: envOf(cmd), dir: cmd.Dir, stdin: opts.Stdin, tty: true, size: size})
		if err != nil {
			return nil, err
		}
		if err := a.resize(ctx, x.id, size); err != nil {
			x.close()
			return nil, err
		}
		st := a.newStream(h, id, true, x)
		st.stdinOK = opts.Stdin
		a.touch(h)
		return st, nil
	}
	stdin := "0"
	if opts.Stdin {
		stdin = "1"
	}
	args := append([]string{sessionBase, id, opts.Name, stdin, created}, cmd.Argv()...)
	x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptSession, args...), env: envOf(cmd), dir: cmd.Dir})
	if err != nil {
		return nil, err
	}
	// The exec goes on as the session's runner: the line it prints says
	// the session started, and the attachment is let go after it.
	line, failure, err := firstLine(ctx, x)
	if err != nil {
		return nil, err
	}
	verb, got, _ := strings.Cut(strings.TrimSpace(line), " ")
	if (verb != "started" && verb != "existing") || paddock.ValidateSessionID(got) != nil {
		return nil, &paddock.UnavailableError{Detail: "docker: starting the session failed: " + short(failure+line)}
	}
	return a.follow(ctx, h, got)
}

// follow subscribes to a journaled session from byte zero.
func (a *Adapter) follow(ctx context.Context, h paddock.Handle, id string) (paddock.Stream, error) {
	x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptFollow, sessionBase+"/s/"+id)})
	if err != nil {
		return nil, err
	}
	a.touch(h)
	return a.newStream(h, id, false, x), nil
}

// Attach replays a journaled session from byte zero, then tails it; a
// finished one replays and ends with its recorded exit. An unknown
// session (or sandbox) is not_found; a TTY session cannot be re-attached
// (it is not journaled).
func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	out, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptProbe, sessionBase+"/s/"+sessionID)}, nil)
	if err != nil {
		return nil, err
	}
	switch strings.TrimSpace(string(out.stdout)) {
	case "ok":
		return a.follow(ctx, h, sessionID)
	case "tty":
		return nil, &paddock.InvalidError{Detail: "docker: a TTY session is not journaled and cannot be re-attached"}
	case "missing":
		return nil, paddock.ErrNotFound
	}
	return nil, &paddock.UnavailableError{Detail: "docker: probing the session failed: " + short(string(out.stderr))}
}

// ListSessions lists every session of the sandbox, finished ones too,
// until the sandbox stops (the journal lives on its tmpfs).
func (a *Adapter) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	out, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptList, sessionBase)}, nil)
	if err != nil {
		return nil, err
	}
	if out.code != 0 {
		return nil, &paddock.UnavailableError{Detail: "docker: listing sessions failed: " + short(string(out.stderr))}
	}
	return parseSessions(out.stdout)
}

// parseSessions reads the listing: a header line "ID CREATED TTY MTIME
// LEN", then LEN bytes of command line, per session.
func parseSessions(b []byte) ([]paddock.Session, error) {
	r := bufio.NewReader(bytes.NewReader(b))
	sessions := []paddock.Session{}
	malformed := &paddock.ProviderError{Provider: paddock.ProviderDocker, Detail: "malformed session listing"}
	for {
		line, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			return sessions, nil
		}
		if err != nil {
			return nil, malformed
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, malformed
		}
		created, err1 := strconv.ParseInt(f[1], 10, 64)
		mtime, err2 := strconv.ParseInt(f[3], 10, 64)
		n, err3 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil || n < 0 {
			return nil, malformed
		}
		cmd := make([]byte, n)
		if _, err := io.ReadFull(r, cmd); err != nil {
			return nil, malformed
		}
		s := paddock.Session{ID: f[0], Command: string(cmd), CreatedAt: time.Unix(0, created).UTC(), TTY: f[2] == "1"}
		if mtime > 0 {
			s.LastActivityAt = time.Unix(mtime, 0).UTC()
		}
		sessions = append(sessions, s)
	}
}

// TerminateSession stops one session's process group (SIGTERM, the
// timeout, then SIGKILL; force: SIGKILL at once) and succeeds only when
// none of it is left. An unknown session is done in graceful mode and
// uncertain in force mode; a finished one keeps its recorded exit.
func (a *Adapter) TerminateSession(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	opts, err := paddock.ValidateTermination(sessionID, opts)
	if err != nil {
		return err
	}
	force := opts.Mode == paddock.TerminateForce
	ctx, cancel := context.WithTimeout(ctx, *opts.Timeout+paddock.TerminateTransportAllowance)
	defer cancel()
	mode := "graceful"
	if force {
		mode = "force"
	}
	out, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptTerminate, sessionBase+"/s/"+sessionID, mode,
		strconv.FormatInt(opts.Timeout.Milliseconds(), 10))}, nil)
	switch {
	case err != nil && errors.Is(err, paddock.ErrNotFound) && !force:
		return nil // no sandbox, no session
	case err != nil && ctx.Err() != nil:
		return &paddock.UnavailableError{Detail: paddock.DetailTerminationTimeout}
	case err != nil && errors.Is(err, paddock.ErrNotFound):
		return paddock.ErrTerminationUnconfirmed
	case err != nil:
		return &paddock.UnavailableError{Detail: paddock.DetailTerminationTransportFailed}
	case out.code == 0:
		return nil
	case out.code == 3 && !force:
		return nil
	}
	return paddock.ErrTerminationUnconfirmed
}

// firstLine reads an exec's stdout up to its first newline (or the end of
// its output) and closes the attachment, leaving the process running;
// failure is what it wrote on stderr meanwhile. ctx bounds it.
func firstLine(ctx context.Context, x *attached) (line, failure string, err error) {
	defer x.close()
	stop := context.AfterFunc(ctx, x.close)
	defer stop()
	var out, errOut bytes.Buffer
	buf := make([]byte, 4096)
	for !bytes.Contains(out.Bytes(), []byte("\n")) && out.Len() < 4096 {
		stream, data, err := x.next(buf)
		switch stream {
		case muxStdout:
			out.Write(data)
		case muxStderr, muxSystem:
			if errOut.Len() < 4096 {
				errOut.Write(data)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", "", ctxError(ctx)
			}
			if !errors.Is(err, io.EOF) {
				return "", "", &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit + ": " + short(err.Error())}
			}
			break
		}
	}
	line, _, _ = strings.Cut(out.String(), "\n")
	return line, errOut.String(), nil
}
