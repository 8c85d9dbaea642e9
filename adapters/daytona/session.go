package daytona

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock"
)

// sessionView is a session as the daemon lists it.
type sessionView struct {
	SessionID string `json:"sessionId"`
	Commands  []struct {
		ID      string `json:"id"`
		CmdID   string `json:"cmdId"`
		Command string `json:"command"`
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
		_, disp, _ := v.command()
		out = append(out, paddock.Session{ID: v.SessionID, Command: disp})
	}
	return out, nil
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
	st := a.follow(tb, sessionID, id, opts.Stdin)
	st.session = sessionID
	return st, nil
}
