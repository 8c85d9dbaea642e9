package sprites

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// TerminateSession stops one session through the kill endpoint
// (docs/contract.md#bounded-sprites): one POST with the signal (SIGTERM, or SIGKILL in force mode) and the
// timeout, within timeout + 5 s and a 16 KiB budget. 404 (and 410, the
// session already gone) is done in graceful mode and unconfirmed in force
// mode; a 200 needs the NDJSON
// evidence killConfirmed demands; any other status is judged by itself.
func (a *Adapter) TerminateSession(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	opts, err := paddock.ValidateTermination(sessionID, opts)
	if err != nil {
		return err
	}
	if a.cfg.Token.IsZero() {
		return errNoToken
	}
	force := opts.Mode == paddock.TerminateForce
	signal := "SIGTERM"
	if force {
		signal = "SIGKILL"
	}
	ctx, cancel := context.WithTimeout(ctx, *opts.Timeout+paddock.TerminateTransportAllowance)
	defer cancel()
	q := url.Values{"signal": {signal}, "timeout": {fmt.Sprintf("%dms", opts.Timeout.Milliseconds())}}
	status, data, answered, err := a.boundedDo(ctx, http.MethodPost, spritePath(h.Name, "exec", httpx.Escape(sessionID), "kill"), q, nil, httpx.NewBudget(killBudget))
	if err != nil {
		return boundedFailure(ctx, answered, err, paddock.DetailTerminationTimeout, paddock.DetailTerminationTransportFailed, paddock.DetailTerminationUnconfirmed)
	}
	gone := status == http.StatusNotFound || status == http.StatusGone // 410: the session already exited
	switch {
	case gone && force:
		return paddock.ErrTerminationUnconfirmed
	case gone:
		return nil
	case status != http.StatusOK:
		return httpx.Status(status, nil, nil, "")
	case !killConfirmed(data, force):
		return paddock.ErrTerminationUnconfirmed
	}
	return nil
}

// signalSession is the signal fallback for servers that take no signal
// message on the socket: POST .../kill with the signal's bare name and a
// zero timeout, which signals without escalating. 404 and 410 (the
// session is gone) mean the command has exited.
func (a *Adapter) signalSession(ctx context.Context, sprite, sessionID string, sig paddock.Signal) error {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	q := url.Values{"signal": {string(sig)}, "timeout": {"0s"}}
	status, _, answered, err := a.boundedDo(ctx, http.MethodPost, spritePath(sprite, "exec", httpx.Escape(sessionID), "kill"), q, nil, httpx.NewBudget(killBudget))
	switch {
	case err != nil && answered && errors.Is(err, httpx.ErrBudget):
		return nil // the signal was sent; its report was long
	case err != nil:
		return &paddock.WriteFailedError{Detail: "sprites signal: " + err.Error()}
	case status == http.StatusNotFound || status == http.StatusGone:
		return paddock.ErrCommandExited
	case status != http.StatusOK:
		return httpx.Status(status, nil, nil, "")
	}
	return nil
}

// Attach rejoins a live session: session info, the scrollback, then live
// output. An unknown or finished session is not_found.
func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	return a.start(ctx, h.Name, spritePath(h.Name, "exec", httpx.Escape(sessionID)), url.Values{"stdin": {strconv.FormatBool(opts.Stdin)}}, false)
}

// sessionEntry is one element of the session list.
type sessionEntry struct {
	ID           json.RawMessage `json:"id"`
	Command      string          `json:"command"`
	Created      time.Time       `json:"created"`
	LastActivity time.Time       `json:"last_activity"`
	TTY          bool            `json:"tty"`
}

// ListSessions lists the sprite's live sessions, each running (Sprites
// drops a session from its list once it ends, and its is_active says only
// whether a client is attached). The object form is read, and a bare array
// is accepted.
func (a *Adapter) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, spritePath(h.Name, "exec"), nil, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusError(status, header, data)
	}
	var entries []sessionEntry
	var wrapped struct {
		Sessions []sessionEntry `json:"sessions"`
	}
	if json.Unmarshal(data, &wrapped) == nil && wrapped.Sessions != nil {
		entries = wrapped.Sessions
	} else if err := json.Unmarshal(data, &entries); err != nil {
		return nil, &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "malformed session list"}
	}
	out := make([]paddock.Session, 0, len(entries))
	for _, e := range entries {
		out = append(out, paddock.Session{ID: jsonID(e.ID), Command: e.Command, CreatedAt: e.Created,
			LastActivityAt: e.LastActivity, TTY: e.TTY, State: paddock.SessionRunning})
	}
	return out, nil
}
