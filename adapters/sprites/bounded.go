package sprites

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// Byte budgets of the bounded operations.
const (
	createBudget     = 64 << 10 // create-new's answer
	deleteBudget     = 64 << 10 // each destroy-once answer
	checkpointBudget = 64 << 10 // checkpoint-once's two answers together
	killBudget       = 16 << 10 // terminate's answer
)

// boundedFailure classifies a bounded request that got no usable answer:
// past the deadline it is the operation's timeout; a failure before any
// answer is its transport failure; an answer lost, cut short or over
// budget is unconfirmed.
func boundedFailure(ctx context.Context, answered bool, err error, timeout, transport, unconfirmed string) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &paddock.UnavailableError{Detail: timeout}
	case !answered && !errors.Is(err, httpx.ErrBudget):
		return &paddock.UnavailableError{Detail: transport}
	}
	return &paddock.UnavailableError{Detail: unconfirmed}
}

// boundedDo sends one bounded request and reads its answer within budget.
// answered reports whether a status came back.
func (a *Adapter) boundedDo(ctx context.Context, method, path string, query url.Values, body any, budget *httpx.Budget) (status int, data []byte, answered bool, err error) {
	var rd io.Reader
	if body != nil {
		b, merr := json.Marshal(body)
		if merr != nil {
			return 0, nil, false, merr
		}
		rd = bytes.NewReader(b)
	}
	req, err := a.rest.NewRequest(ctx, method, path, query, rd)
	if err != nil {
		return 0, nil, false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := a.bound.Do(req)
	if err != nil {
		a.rest.LogCall(method, path, 0, start, err)
		return 0, nil, false, err
	}
	defer res.Body.Close()
	data, err = budget.Read(res)
	a.rest.LogCall(method, path, res.StatusCode, start, err)
	return res.StatusCode, data, true, err
}

// CreateNew makes one creation attempt that never adopts
// (docs/contract.md#bounded-sprites):
// one POST carrying the URL setting, within the timeout and a 64 KiB
// budget, no retries, no redirects. 409 is already_exists; a 2xx must echo
// the name and carry an id of 1..256 bytes; any other status is judged by
// the status alone (no provider prose).
func (a *Adapter) CreateNew(ctx context.Context, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	opts, err := opts.Validate()
	if err != nil {
		return paddock.Handle{}, err
	}
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	if a.cfg.Token.IsZero() {
		return paddock.Handle{}, errNoToken
	}
	ctx, cancel := context.WithTimeout(ctx, *opts.Timeout)
	defer cancel()
	auth := "sprite"
	if *a.cfg.PublicURLs {
		auth = "public"
	}
	body := map[string]any{"name": name, "wait_for_capacity": opts.WaitForCapacity, "url_settings": map[string]string{"auth": auth}}
	if !opts.Lease.IsZero() {
		body["labels"] = a.createLabels(opts.Lease)
	}
	status, data, answered, err := a.boundedDo(ctx, http.MethodPost, "/v1/sprites", nil, body, httpx.NewBudget(createBudget))
	if err != nil {
		return paddock.Handle{}, boundedFailure(ctx, answered, err, paddock.DetailCreateTimeout, paddock.DetailCreateTransportFailed, paddock.DetailCreateUnconfirmed)
	}
	switch {
	case status == http.StatusConflict:
		return paddock.Handle{}, paddock.ErrAlreadyExists
	case status < 200 || status > 299:
		return paddock.Handle{}, httpx.Status(status, nil, nil, "")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return paddock.Handle{}, paddock.ErrCreateUnconfirmed
	}
	gotName, nameOK := stringField(obj, "name")
	id, idOK := stringField(obj, "id")
	if !nameOK || gotName != name || !idOK || len(id) < 1 || len(id) > 256 {
		return paddock.Handle{}, paddock.ErrCreateUnconfirmed
	}
	h := a.BuildHandle(name)
	h.InstanceID = id
	return h, nil
}

// DestroyOnce makes one bounded deletion attempt
// (docs/contract.md#bounded-sprites): a DELETE;
// a 404 is done; a 2xx is confirmed only by one GET of the same path
// answering 404; every other answer (and any answer to the GET but 404)
// is delete_unconfirmed, with no second DELETE.
func (a *Adapter) DestroyOnce(ctx context.Context, h paddock.Handle, opts paddock.DestroyOnceOpts) error {
	opts, err := opts.Validate()
	if err != nil {
		return err
	}
	if a.cfg.Token.IsZero() {
		return errNoToken
	}
	ctx, cancel := context.WithTimeout(ctx, *opts.Timeout)
	defer cancel()
	path := spritePath(h.Name)
	status, _, answered, err := a.boundedDo(ctx, http.MethodDelete, path, nil, nil, httpx.NewBudget(deleteBudget))
	if err != nil {
		return boundedFailure(ctx, answered, err, paddock.DetailDeleteTimeout, paddock.DetailDeleteTransportFailed, paddock.DetailDeleteUnconfirmed)
	}
	switch {
	case status == http.StatusNotFound:
		return nil
	case status < 200 || status > 299:
		return paddock.ErrDeleteUnconfirmed
	}
	status, _, answered, err = a.boundedDo(ctx, http.MethodGet, path, nil, nil, httpx.NewBudget(deleteBudget))
	if err != nil {
		return boundedFailure(ctx, answered, err, paddock.DetailDeleteTimeout, paddock.DetailDeleteTransportFailed, paddock.DetailDeleteUnconfirmed)
	}
	if status != http.StatusNotFound {
		return paddock.ErrDeleteUnconfirmed
	}
	return nil
}

// CreateCheckpointOnce makes one bounded checkpoint tied to an operation id
// (docs/contract.md#bounded-sprites): a POST whose NDJSON answer must complete cleanly, then one
// listing GET that must show exactly one checkpoint with the operation's
// comment; one deadline and one 64 KiB budget cover both. The work runs
// detached from the caller's cancellation under its own deadline, so a
// caller that goes away cannot leave a request running past it.
func (a *Adapter) CreateCheckpointOnce(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOnceOpts) (string, error) {
	opts, err := opts.Validate()
	if err != nil {
		return "", err
	}
	if !a.cfg.CheckpointCreation {
		return "", paddock.ErrNotSupported
	}
	if a.cfg.Token.IsZero() {
		return "", errNoToken
	}
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), *opts.Timeout)
	type result struct {
		id  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer cancel()
		id, err := a.checkpointOnce(work, h.Name, paddock.CheckpointComment(opts.OperationID))
		done <- result{id, err}
	}()
	select {
	case r := <-done:
		return r.id, r.err
	case <-ctx.Done():
		// The caller left; the request still ends by its own deadline.
		return "", &paddock.UnavailableError{Detail: paddock.DetailCheckpointUnconfirmed}
	}
}

func (a *Adapter) checkpointOnce(ctx context.Context, name, comment string) (string, error) {
	budget := httpx.NewBudget(checkpointBudget)
	status, data, answered, err := a.boundedDo(ctx, http.MethodPost, spritePath(name, "checkpoint"), nil, map[string]string{"comment": comment}, budget)
	if err != nil {
		return "", boundedFailure(ctx, answered, err, paddock.DetailCheckpointTimeout, paddock.DetailCheckpointTransportFailed, paddock.DetailCheckpointUnconfirmed)
	}
	if status != http.StatusOK || !checkpointStreamComplete(data) {
		return "", paddock.ErrCheckpointUnconfirmed
	}
	status, data, answered, err = a.boundedDo(ctx, http.MethodGet, spritePath(name, "checkpoints"), nil, nil, budget)
	if err != nil {
		return "", boundedFailure(ctx, answered, err, paddock.DetailCheckpointTimeout, paddock.DetailCheckpointTransportFailed, paddock.DetailCheckpointUnconfirmed)
	}
	if status != http.StatusOK {
		return "", paddock.ErrCheckpointUnconfirmed
	}
	id, ok := matchCheckpoint(data, comment)
	if !ok {
		return "", paddock.ErrCheckpointUnconfirmed
	}
	return id, nil
}

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
