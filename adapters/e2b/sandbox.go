package e2b

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// The control plane. Every operation finds
// its sandbox by name again: an id is never cached, since a sandbox can be
// killed, or replaced by a racing create, behind our back.

// created is the part of a create or connect answer the adapter reads.
type created struct {
	SandboxID string `json:"sandboxID"`
	LegacyID  string `json:"sandboxId"` // an older spelling some servers send
}

func (c created) id() string {
	if c.SandboxID != "" {
		return c.SandboxID
	}
	return c.LegacyID
}

// listed is one entry of a sandbox listing.
type listed struct {
	SandboxID  string            `json:"sandboxID"`
	TemplateID string            `json:"templateID"`
	State      string            `json:"state"`
	StartedAt  string            `json:"startedAt"`
	Metadata   map[string]string `json:"metadata"`
	raw        json.RawMessage
}

// sandboxPath is /sandboxes/<id> plus more segments.
func sandboxPath(id string, more ...string) string {
	p := "/sandboxes/" + httpx.Escape(id)
	for _, m := range more {
		p += "/" + m
	}
	return p
}

// ttlSeconds is the configured TTL in whole seconds (at least 1).
func (a *Adapter) ttlSeconds() int {
	return max(int(a.cfg.TTL/time.Second), 1)
}

// Create adopts the sandbox called name, running or paused, or creates it
// with its name in the metadata. Two racing creates of one name can both
// find nothing and both create: the window is one list call wide, and from
// then on every lookup takes the newest (the listing is newest first), so
// both callers converge on one sandbox; the other is left for Reap.
func (a *Adapter) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	for k := range opts.Params {
		return paddock.Handle{}, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": unknown parameter " + strconv.Quote(k)}
	}
	found, err := a.find(ctx, name)
	if err != nil {
		return paddock.Handle{}, err
	}
	if found != nil {
		if !opts.Lease.IsZero() && found.State == stateRunning {
			if err := a.claim(ctx, found.SandboxID, opts.Lease); err != nil {
				return paddock.Handle{}, err
			}
		}
		return a.BuildHandle(name), nil
	}
	body := map[string]any{
		"templateID": a.cfg.Template,
		"timeout":    a.ttlSeconds(),
		"autoPause":  true,
		"metadata":   a.createMetadata(name, opts.Lease),
	}
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPost, "/sandboxes", nil, body)
	switch {
	case err != nil:
		return paddock.Handle{}, err
	case status == http.StatusNotFound: // the template, not the sandbox
		return paddock.Handle{}, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": template " + strconv.Quote(a.cfg.Template) + " not found", Status: status}
	case status < 200 || status > 299:
		return paddock.Handle{}, a.rest.StatusError(status, header, data)
	}
	var c created
	if err := a.rest.Decode(data, &c); err != nil {
		return paddock.Handle{}, err
	}
	if c.id() == "" {
		return paddock.Handle{}, &paddock.ProviderError{Provider: paddock.ProviderE2B, Detail: "create answered no sandbox id"}
	}
	// A racing create may have made another: converge on the newest.
	return a.BuildHandle(name), nil
}

// find answers the newest sandbox called name, running or paused, or nil.
func (a *Adapter) find(ctx context.Context, name string) (*listed, error) {
	page, _, err := a.listPage(ctx, url.Values{"metadata": {metaFilter(metaName, name)}}, "")
	if err != nil || len(page) == 0 {
		return nil, err
	}
	return &page[0], nil
}

// metaFilter is the metadata query of one key=value pair: each part is
// escaped, and the query encoding escapes the whole again, as E2B reads it.
func metaFilter(key, value string) string {
	return url.QueryEscape(key) + "=" + url.QueryEscape(value)
}

// listPage asks for one page of sandboxes (both states), from token.
func (a *Adapter) listPage(ctx context.Context, q url.Values, token string) ([]listed, string, error) {
	q.Set("state", "running,paused")
	if token != "" {
		q.Set("nextToken", token)
	}
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, "/v2/sandboxes", q, nil)
	if err != nil {
		return nil, "", err
	}
	if status != http.StatusOK {
		return nil, "", a.rest.StatusError(status, header, data)
	}
	var raws []json.RawMessage
	if err := a.rest.Decode(data, &raws); err != nil {
		return nil, "", err
	}
	out := make([]listed, 0, len(raws))
	for _, r := range raws {
		var l listed
		if err := a.rest.Decode(r, &l); err != nil {
			return nil, "", err
		}
		l.raw = r
		out = append(out, l)
	}
	return out, header.Get("X-Next-Token"), nil
}

// ListAllNames walks every page of our sandboxes; past maxListPages it
// refuses with ErrTruncated rather than answer part of the account.
func (a *Adapter) ListAllNames(ctx context.Context) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	token := ""
	for range maxListPages {
		page, next, err := a.listPage(ctx, url.Values{"metadata": {metaFilter(metaMarker, "1")}, "limit": {"100"}}, token)
		if err != nil {
			return nil, err
		}
		for _, l := range page {
			if n := l.Metadata[metaName]; n != "" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		if next == "" {
			return names, nil
		}
		token = next
	}
	return nil, paddock.ErrTruncated
}

// Get reports the newest sandbox called name.
func (a *Adapter) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return paddock.Info{}, err
	}
	l, err := a.find(ctx, h.Name)
	if err != nil {
		return paddock.Info{}, err
	}
	if l == nil {
		return paddock.Info{}, paddock.ErrNotFound
	}
	info := paddock.Info{Name: h.Name, ID: l.SandboxID, Image: l.TemplateID, Status: paddock.StatusOf(paddock.ProviderE2B, l.State), Raw: l.raw}
	if t, err := time.Parse(time.RFC3339Nano, l.StartedAt); err == nil {
		info.CreatedAt = t
	}
	return info, nil
}

// Destroy kills every sandbox called name (a racing create may have made
// two); an absent one is success, and so is a 404 (it went meanwhile).
func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return err
	}
	for {
		l, err := a.find(ctx, h.Name)
		if err != nil || l == nil {
			return err
		}
		if err := a.kill(ctx, l.SandboxID); err != nil {
			return err
		}
	}
}

// kill kills the sandbox id, running or paused; a 404 is a sandbox that
// went meanwhile: gone either way.
func (a *Adapter) kill(ctx context.Context, id string) error {
	return a.rest.Expect(ctx, a.client, http.MethodDelete, sandboxPath(id), nil,
		http.StatusNoContent, http.StatusOK, http.StatusNotFound)
}

// Suspend pauses the sandbox (memory kept, processes survive); an already
// paused one, or a 409 (paused meanwhile), is success.
func (a *Adapter) Suspend(ctx context.Context, h paddock.Handle) error {
	l, err := a.mustFind(ctx, h)
	if err != nil || l.State == "paused" {
		return err
	}
	return a.rest.Expect(ctx, a.client, http.MethodPost, sandboxPath(l.SandboxID, "pause"), map[string]any{},
		http.StatusNoContent, http.StatusOK, http.StatusConflict)
}

// Resume connects to the sandbox: a paused one is resumed, a running one
// keeps running; either way its TTL is at least the configured one.
func (a *Adapter) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	if _, err := a.running(ctx, h); err != nil {
		return paddock.Handle{}, err
	}
	return a.BuildHandle(h.Name), nil
}

// mustFind is find for an operation on an existing sandbox: absence is
// ErrNotFound.
func (a *Adapter) mustFind(ctx context.Context, h paddock.Handle) (*listed, error) {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return nil, err
	}
	l, err := a.find(ctx, h.Name)
	if err == nil && l == nil {
		err = paddock.ErrNotFound
	}
	return l, err
}

// running answers the id of the running sandbox called name, resuming it
// first when it is paused (a missed heartbeat auto-pauses a sandbox; its
// next use brings it back).
func (a *Adapter) running(ctx context.Context, h paddock.Handle) (string, error) {
	l, err := a.mustFind(ctx, h)
	if err != nil {
		return "", err
	}
	if l.State == "paused" {
		if err := a.resume(ctx, l.SandboxID); err != nil {
			return "", err
		}
	}
	return l.SandboxID, nil
}

// resume connects to a paused sandbox, which resumes it (201; a running
// one answers 200) with the configured TTL.
func (a *Adapter) resume(ctx context.Context, id string) error {
	return a.rest.Expect(ctx, a.client, http.MethodPost, sandboxPath(id, "connect"), map[string]any{"timeout": a.ttlSeconds()},
		http.StatusOK, http.StatusCreated)
}

// ApplyNetworkPolicy replaces the sandbox's egress policy: all egress is
// denied (0.0.0.0/0) but the allowed domains, so an empty list denies all.
func (a *Adapter) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	id, err := a.running(ctx, h)
	if err != nil {
		return err
	}
	allow := append([]string{}, p.Allow...)
	body := map[string]any{"denyOut": []string{"0.0.0.0/0"}, "allowOut": allow}
	return a.rest.Expect(ctx, a.client, http.MethodPut, sandboxPath(id, "network"), body, http.StatusNoContent, http.StatusOK)
}

// HeartbeatInterval is a sixth of the TTL: a sandbox in use is extended
// five times before it would expire.
func (a *Adapter) HeartbeatInterval() time.Duration { return a.cfg.TTL / 6 }

// Heartbeat sets the sandbox's TTL to the configured one from now. A
// paused sandbox is left paused (its next use resumes it).
func (a *Adapter) Heartbeat(ctx context.Context, h paddock.Handle) error {
	l, err := a.mustFind(ctx, h)
	if err != nil || l.State == "paused" {
		return err
	}
	return a.extend(ctx, l.SandboxID)
}

// extend sets the sandbox's TTL to the configured one from now (a
// heartbeat). E2B overwrites the TTL, so this can also shorten one set
// longer elsewhere.
func (a *Adapter) extend(ctx context.Context, id string) error {
	return a.rest.Expect(ctx, a.client, http.MethodPost, sandboxPath(id, "timeout"), map[string]any{"timeout": a.ttlSeconds()},
		http.StatusNoContent, http.StatusOK)
}
