package sprites

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// CreateCheckpoint saves the sprite (only with CheckpointCreation on): it
// drains the progress stream, then finds the new checkpoint in the listing
// by its comment (a unique one is made when opts gives none), never from
// the progress prose.
func (a *Adapter) CreateCheckpoint(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOpts) (string, error) {
	if !a.cfg.CheckpointCreation {
		return "", paddock.ErrNotSupported
	}
	comment := opts.Comment
	if comment == "" {
		comment = "paddock:" + time.Now().UTC().Format("20060102T150405.000000000Z")
	}
	status, header, data, err := a.stream(ctx, http.MethodPost, spritePath(h.Name, "checkpoint"), map[string]string{"comment": comment})
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", statusError(status, header, data)
	}
	if msg := streamFailure(data); msg != "" {
		return "", &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "checkpoint failed: " + msg}
	}
	entries, err := a.checkpoints(ctx, h.Name)
	if err != nil {
		return "", err
	}
	var found []checkpointEntry
	for _, e := range entries {
		if e.Comment != nil && *e.Comment == comment && e.ID != currentCheckpoint {
			found = append(found, e)
		}
	}
	if len(found) == 0 {
		return "", &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "the new checkpoint is not in the listing"}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].CreateTime > found[j].CreateTime })
	return found[0].ID, nil
}

// checkpoints reads the listing.
func (a *Adapter) checkpoints(ctx context.Context, name string) ([]checkpointEntry, error) {
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, spritePath(name, "checkpoints"), nil, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, statusError(status, header, data)
	}
	entries, ok := parseCheckpoints(data)
	if !ok {
		return nil, &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "malformed checkpoint listing"}
	}
	return entries, nil
}

// ListCheckpoints lists the saved checkpoints (not the live "Current").
func (a *Adapter) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	if !a.cfg.CheckpointCreation {
		return nil, paddock.ErrNotSupported
	}
	entries, err := a.checkpoints(ctx, h.Name)
	if err != nil {
		return nil, err
	}
	out := make([]paddock.Checkpoint, 0, len(entries))
	for _, e := range entries {
		if e.ID == currentCheckpoint {
			continue
		}
		c := paddock.Checkpoint{ID: e.ID}
		if e.Comment != nil {
			c.Comment = *e.Comment
		}
		c.CreatedAt, _ = time.Parse(time.RFC3339Nano, e.CreateTime)
		out = append(out, c)
	}
	return out, nil
}

// RestoreCheckpoint restores a checkpoint; an error inside the 200 stream
// is a *paddock.RestoreFailedError, never success.
func (a *Adapter) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	if !a.cfg.CheckpointCreation {
		return paddock.ErrNotSupported
	}
	a.restores.Begin(h.Name) // before the request: its kills may come back before its answer
	status, header, data, err := a.stream(ctx, http.MethodPost, spritePath(h.Name, "checkpoints", httpx.Escape(checkpointID), "restore"), nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return statusError(status, header, data)
	}
	return restoreOutcome(data)
}

// stream is call for a streamed (NDJSON) answer: no overall client timeout,
// the caller's context bounds it.
func (a *Adapter) stream(ctx context.Context, method, path string, body any) (int, http.Header, []byte, error) {
	return a.rest.Call(ctx, a.streaming, method, path, nil, body)
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
