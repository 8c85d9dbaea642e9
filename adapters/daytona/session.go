package daytona

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// sessionView is a session as the daemon lists it.
type sessionView struct {
	SessionID string `json:"sessionId"`
	Commands  []struct {
		ID       string `json:"id"`
		CmdID    string `json:"cmdId"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exitCode"`
	} `json:"commands"`
}

// command is the session's command (ours have exactly one): its id and
// the display line its wrapper starts with.
func (v sessionView) command() (id, display string, ok bool) {
	if len(v.Commands) == 0 {
		return "", "", false
	}
	c := v.Commands[0]
	id = c.ID
	id = cmp.Or(id, c.CmdID)
	line, _, _ := strings.Cut(c.Command, "\n")
	return id, strings.TrimPrefix(line, "# paddock: "), id != ""
}

// exitCode is the daemon's record of the session's command's exit code:
// nil while it runs.
func (v sessionView) exitCode() *int {
	if len(v.Commands) == 0 {
		return nil
	}
	return v.Commands[0].ExitCode
}

// ListSessions lists the detachable spawns of the sandbox (the daemon
// forgets every session when the sandbox stops).
func (a *Adapter) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, err
	}
	status, header, data, err := tb.rest.Call(ctx, a.client, http.MethodGet, "/process/session", nil, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, tb.rest.StatusError(status, header, data)
	}
	var views []sessionView
	if err := json.Unmarshal(data, &views); err != nil {
		var wrapped struct {
			Sessions []sessionView `json:"sessions"`
		}
		if err := tb.rest.Decode(data, &wrapped); err != nil {
			return nil, err
		}
		views = wrapped.Sessions
	}
	var out []paddock.Session
	for _, v := range views {
		if !strings.HasPrefix(v.SessionID, sessionPrefix) || paddock.ValidateSessionID(v.SessionID) != nil {
			continue
		}
		cmd, disp, ok := v.command()
		s := paddock.Session{ID: v.SessionID, Command: disp}
		switch code := v.exitCode(); {
		case !ok:
		case code == nil:
			s.State = paddock.SessionRunning
		case *code == lostExitCode:
			switch lost, err := a.lostCode(ctx, tb, v.SessionID, cmd); {
			case err != nil: // its journal cannot be read: the state stays unknown
			case lost:
				s.Ended(paddock.Failed(paddock.ErrClosedBeforeExit))
			default:
				s.Ended(paddock.Exit(*code))
			}
		default:
			s.Ended(paddock.Exit(*code))
		}
		out = append(out, s)
	}
	return out, nil
}

// lostCode reports whether the wrapper of a session's command wrote
// unknownExitLine, which makes its exit code the wrapper's, not the
// command's (the stream then ends closed_before_exit). It reads the whole
// journal, so a listing does it only for that code.
func (a *Adapter) lostCode(ctx context.Context, tb *toolbox, session, cmd string) (bool, error) {
	req, err := tb.rest.NewRequest(ctx, http.MethodGet, "/process/session/"+session+"/command/"+cmd+"/logs", nil, nil)
	if err != nil {
		return false, err
	}
	res, err := a.streaming.Do(req)
	if err != nil {
		return false, httpx.Transport(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, tb.rest.MaxBody))
		return false, tb.rest.StatusError(res.StatusCode, res.Header, body)
	}
	var journal wrapped
	buf := make([]byte, 64<<10)
	for {
		n, err := res.Body.Read(buf)
		_ = journal.Write(buf[:n], nil)
		if errors.Is(err, io.EOF) {
			return journal.unknown, nil
		}
		if err != nil {
			return false, httpx.Transport(err)
		}
	}
}

// Attach follows a session's journal from byte zero to its end; with
// opts.Stdin, writes reach the original command.
func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(sessionID, sessionPrefix) {
		return nil, paddock.ErrNotFound
	}
	restored := a.restores.Since(h.Name) // before the lookup: a restore may replace the sandbox found
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, err
	}
	var v sessionView
	if err := tb.rest.Found(ctx, a.client, http.MethodGet, "/process/session/"+sessionID, nil, nil, &v); err != nil {
		return nil, err
	}
	id, _, ok := v.command()
	if !ok {
		return nil, paddock.ErrNotFound
	}
	st := a.follow(tb, sessionID, id, opts.Stdin, restored)
	st.session = sessionID
	return st, nil
}
