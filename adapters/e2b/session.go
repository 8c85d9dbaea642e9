package e2b

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// pollInterval is how long an attach waits before looking at a quiet
// journal again. It sets the latency of followed output, never whether the
// output is complete: the exit record says that.
const pollInterval = 100 * time.Millisecond

// maxChunk bounds one read of a journal file.
const maxChunk = 256 << 10

// ListSessions lists the sandbox's journals, finished ones included, each
// with its state: its exit record's code, running while envd lists its
// process, else closed_before_exit (the wrapper records the exit before it
// ends, so a journal without one whose process is gone never gets one).
func (a *Adapter) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	script := `for d in "$HOME"/` + journalRoot + `/*/; do [ -f "$d/cmd" ] || continue; ` +
		`n=${d%/}; printf '%s\0' "${n##*/}"; cat "$d/cmd"; printf '\0'; cat "$d/exit" 2>/dev/null; printf '\0'; done`
	res, err := a.Exec(ctx, h, paddock.NewCmd("/bin/sh", "-c", script), paddock.ExecOpts{})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, &paddock.UnavailableError{Detail: "e2b: listing the journals failed: " + string(res.Stderr)}
	}
	// The process list is taken after the journals: a process it lists
	// may have ended since, but one it does not list ended before.
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	list, err := a.processes(id, false).List(ctx, connect.NewRequest(&processpb.ListRequest{}))
	if err != nil {
		return nil, envdError(err)
	}
	live := map[string]*processpb.ProcessInfo{}
	for _, p := range list.Msg.GetProcesses() {
		if strings.HasPrefix(p.GetTag(), sessionPrefix) {
			live[p.GetTag()] = p
		}
	}
	parts := bytes.Split(res.Stdout, []byte{0})
	var out []paddock.Session
	for i := 0; i+2 < len(parts); i += 3 {
		s := paddock.Session{ID: string(parts[i]), Command: string(parts[i+1])}
		if paddock.ValidateSessionID(s.ID) != nil {
			continue // not one of ours
		}
		record := parts[i+2]
		if len(record) == 0 && live[s.ID] != nil {
			s.State = paddock.SessionRunning
		} else if len(record) == 0 {
			if record, _, err = a.readJournal(ctx, id, s.ID, "exit", 0); err != nil {
				return nil, err
			}
		}
		switch code, ok := parseExit(record); {
		case ok:
			s.Ended(paddock.Exit(code))
		case len(record) == 0 && s.State == "":
			s.Ended(paddock.Failed(paddock.ErrClosedBeforeExit))
		}
		delete(live, s.ID)
		out = append(out, s)
	}
	// A session just spawned may not have written its journal yet: its
	// process, tagged with its id, is listed by envd already.
	for tag, p := range live {
		out = append(out, paddock.Session{ID: tag, Command: journalLine(p.GetConfig().GetArgs()), State: paddock.SessionRunning})
	}
	return out, nil
}

// journalLine is the command line a journal wrapper's arguments carry.
func journalLine(args []string) string {
	if len(args) < 5 {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(args[4])
	if err != nil {
		return ""
	}
	return string(b)
}

// Attach replays session id's journal from byte zero, then follows it
// until its exit record; writes go to the original process.
func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	restored := a.restores.Since(h.Name) // before the lookup: a restore may replace the sandbox found
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	if _, _, err := a.readJournal(ctx, id, sessionID, "cmd", 0); err != nil {
		return nil, err // ErrNotFound: no such session
	}
	s := &journalStream{process: process{a: a, sandbox: id}, session: sessionID, stdin: opts.Stdin}
	s.restored = restored
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.pid, s.live = a.sessionPID(ctx, id, sessionID)
	return s, nil
}

// sessionPID finds the live process of a session by its tag in the
// process list (the list shows every tag; selecting by tag can miss).
func (a *Adapter) sessionPID(ctx context.Context, id, session string) (uint32, bool) {
	res, err := a.processes(id, false).List(ctx, connect.NewRequest(&processpb.ListRequest{}))
	if err != nil {
		return 0, false
	}
	for _, p := range res.Msg.GetProcesses() {
		if p.GetTag() == session {
			return p.GetPid(), true
		}
	}
	return 0, false
}

// readJournal reads one journal file of a session from offset: its bytes
// (at most maxChunk), and whether the file exists. A missing file is
// (nil, false, nil); a missing session directory for "cmd" is ErrNotFound.
func (a *Adapter) readJournal(ctx context.Context, id, session, name string, offset int64) ([]byte, bool, error) {
	req, err := a.filesRequest(ctx, http.MethodGet, id, journalDir(session)+"/"+name, nil)
	if err != nil {
		return nil, false, err
	}
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	res, err := a.streaming.Do(req)
	if err != nil {
		return nil, false, httpx.Transport(err)
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK, http.StatusPartialContent:
		b, err := io.ReadAll(io.LimitReader(res.Body, maxChunk))
		if err != nil {
			return nil, true, httpx.Transport(err)
		}
		return b, true, nil
	case http.StatusRequestedRangeNotSatisfiable:
		return nil, true, nil // nothing past offset yet
	case http.StatusNotFound:
		if name == "cmd" {
			return nil, false, paddock.ErrNotFound
		}
		return nil, false, nil
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
	return nil, false, a.rest.StatusError(res.StatusCode, res.Header, body)
}

// journalStream follows a session's journal.
type journalStream struct {
	process // the original process, for stdin (pid valid while live)
	ending
	session string
	live    bool
	stdin   bool // the attach asked for stdin
	ctx     context.Context
	cancel  context.CancelFunc

	outOff, errOff int64
	exitSeen       bool // the exit record exists: what remains is the rest
	quiet          int  // polls in a row with nothing new
}

// Next returns the journal's next bytes (stdout first, then stderr), and
// once the exit record exists and both files are read to their end, the
// recorded exit. A session whose process is gone without a record ends
// closed_before_exit; a garbled record is the provider's error.
func (s *journalStream) Next(ctx context.Context) (paddock.Event, error) {
	if s.over() {
		return paddock.Event{}, io.EOF
	}
	for {
		if err := ctx.Err(); err != nil {
			return paddock.Event{}, err
		}
		for _, f := range []struct {
			name string
			off  *int64
			ev   func([]byte) paddock.Event
		}{{"out", &s.outOff, paddock.Stdout}, {"err", &s.errOff, paddock.Stderr}} {
			b, _, err := s.a.readJournal(ctx, s.sandbox, s.session, f.name, *f.off)
			if err != nil {
				return paddock.Event{}, err
			}
			if len(b) > 0 {
				*f.off += int64(len(b))
				s.quiet = 0
				return f.ev(b), nil
			}
		}
		if s.exitSeen {
			record, _, err := s.a.readJournal(ctx, s.sandbox, s.session, "exit", 0)
			if err != nil {
				return paddock.Event{}, err
			}
			return s.finish(record), nil
		}
		_, exists, err := s.a.readJournal(ctx, s.sandbox, s.session, "exit", 0)
		if err != nil {
			return paddock.Event{}, err
		}
		if exists {
			s.exitSeen = true // read both files to their end once more
			continue
		}
		if s.quiet++; s.quiet%20 == 0 { // every 2 s of silence: is the process still there?
			if _, live := s.a.sessionPID(ctx, s.sandbox, s.session); !live {
				if _, exists, err := s.a.readJournal(ctx, s.sandbox, s.session, "exit", 0); err == nil && !exists {
					return s.terminal(paddock.Failed(paddock.ErrClosedBeforeExit)), nil
				}
			}
		}
		select {
		case <-time.After(pollInterval):
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		case <-s.ctx.Done():
			return paddock.Event{}, io.EOF
		}
	}
}

// finish is the terminal event of a read exit record.
func (s *journalStream) finish(record []byte) paddock.Event {
	code, ok := parseExit(record)
	if !ok {
		return s.terminal(paddock.Failed(&paddock.ProviderError{Provider: paddock.ProviderE2B, Detail: "a garbled exit record in session " + s.session}))
	}
	return s.terminal(paddock.Exit(code))
}

// WriteStdin writes to the original process; without one it has exited;
// an attach that did not ask for stdin has none.
func (s *journalStream) WriteStdin(ctx context.Context, p []byte) error {
	switch {
	case !s.live || s.isClosed():
		return paddock.ErrCommandExited
	case !s.stdin:
		return &paddock.WriteFailedError{Detail: "stdin was not requested for this subscription"}
	}
	return s.writeStdin(ctx, p)
}

// CloseStdin sends EOF to the original process.
func (s *journalStream) CloseStdin(ctx context.Context) error {
	if s.isClosed() {
		return paddock.ErrCommandExited
	}
	if !s.live {
		return nil
	}
	return s.closeStdin(ctx)
}

// Close stops following; the session goes on.
func (s *journalStream) Close() error {
	s.markClosed()
	s.cancel()
	return nil
}

// SessionID is the attached session.
func (s *journalStream) SessionID() string { return s.session }
