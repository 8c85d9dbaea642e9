package sprites

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
