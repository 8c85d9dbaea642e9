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

// follow subscribes to a journaled session from byte zero.
func (a *Adapter) follow(ctx context.Context, h paddock.Handle, id string) (paddock.Stream, error) {
	x, err := a.startExec(ctx, h.Name, followSpec(sessionBase+"/s/"+id, 0, 0))
	if err != nil {
		return nil, err
	}
	a.touch(h)
	return a.newStream(h, id, false, x, nil), nil
}

// Attach replays a journaled session from byte zero, then tails it; a
// finished one replays and ends with its recorded exit. An unknown
// session (or sandbox) is not_found; a TTY session cannot be re-attached
// (it is not journaled).
func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	a.serveEgress(ctx, h.Name)
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
// LEN STATE [NAME]", then LEN bytes of command line, per session.
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
		if len(f) != 6 && len(f) != 7 {
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
		if !describeState(&s, f[5]) {
			return nil, malformed
		}
		if len(f) == 7 {
			s.Name = f[6]
		}
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

// describeState sets a listed session's state from the listing's STATE
// field; false for a field that is none of the listing's.
func describeState(s *paddock.Session, field string) bool {
	switch field {
	case "running":
		s.State = paddock.SessionRunning
	case "ended":
		s.State = paddock.SessionEnded
	case "lost":
		s.Ended(paddock.Failed(paddock.ErrClosedBeforeExit))
	default:
		code, err := strconv.Atoi(strings.TrimPrefix(field, "exit:"))
		if err != nil || !strings.HasPrefix(field, "exit:") {
			return false
		}
		s.Ended(paddock.Exit(code))
	}
	return true
}
