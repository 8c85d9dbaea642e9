package daytona

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// The control plane. A sandbox is addressed by its name (Daytona resolves
// an id first, then a name, so every answer's name is checked); the
// toolbox is addressed by the id the answer carries.

// sandbox is the part of Daytona's Sandbox object the adapter reads.
type sandbox struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	State           string            `json:"state"`
	DesiredState    string            `json:"desiredState"`
	ErrorReason     string            `json:"errorReason"`
	Snapshot        string            `json:"snapshot"`
	CreatedAt       string            `json:"createdAt"`
	ToolboxProxyURL string            `json:"toolboxProxyUrl"`
	Labels          map[string]string `json:"labels"`
	raw             json.RawMessage
}

// States the adapter acts on.
const (
	stateStarted  = "started"
	stateStopped  = "stopped"
	stateArchived = "archived"
)

// startingStates are on the way to started by themselves.
var startingStates = map[string]bool{"starting": true, "restoring": true, "resuming": true, "creating": true,
	"pending_build": true, "building_snapshot": true, "pulling_snapshot": true}

// failed reports a state a sandbox does not leave by itself.
func failed(state string) bool { return state == "error" || state == "build_failed" }

// sandboxPath is /sandbox/<idOrName> plus more segments.
func sandboxPath(idOrName string, more ...string) string {
	p := "/sandbox/" + httpx.Escape(idOrName)
	for _, m := range more {
		p += "/" + m
	}
	return p
}

// Creation parameters (CreateOpts.Params): a snapshot, or an image with
// resources (Daytona takes resources only with an image it builds); the
// lifetime intervals in minutes; environment variables (env.NAME) and
// extra labels (label.KEY); the egress policy at birth.
const (
	paramSnapshot    = "snapshot"
	paramImage       = "image"
	paramCPU         = "cpu"
	paramMemory      = "memory_gb"
	paramDisk        = "disk_gb"
	paramAutoStop    = "auto_stop_minutes"
	paramAutoArchive = "auto_archive_minutes"
	paramAutoDelete  = "auto_delete_minutes"
	paramBlockAll    = "network_block_all"
	paramDomains     = "domain_allow_list"
	paramEnvPrefix   = "env."
	paramLabelPrefix = "label."
)

// knownParams lists the parameters for an unknown one's error.
const knownParams = "snapshot, image, cpu, memory_gb, disk_gb, auto_stop_minutes, auto_archive_minutes, auto_delete_minutes, " +
	"network_block_all, domain_allow_list, env.NAME, label.KEY"

// createBody builds the create request for name from the configuration
// and the parameters; an unknown or malformed parameter is invalid.
func (a *Adapter) createBody(name string, params map[string]string) (map[string]any, error) {
	labels := map[string]string{labelMarker: "1"}
	env := map[string]string{}
	body := map[string]any{
		"name":                name,
		"labels":              labels,
		"autoStopInterval":    a.cfg.AutoStopMinutes,
		"autoArchiveInterval": a.cfg.AutoArchiveMinutes,
	}
	if a.cfg.Snapshot != "" {
		body["snapshot"] = a.cfg.Snapshot
	}
	bad := func(k, why string) error {
		return &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": " + k + " " + why}
	}
	for k, v := range params {
		switch {
		case k == paramSnapshot:
			body["snapshot"] = v
		case k == paramImage:
			if v == "" || strings.ContainsAny(v, "\n\r") {
				return nil, bad(k, "must be one image reference")
			}
			body["buildInfo"] = map[string]string{"dockerfileContent": "FROM " + v}
		case k == paramCPU || k == paramMemory || k == paramDisk:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, bad(k, "must be a whole number above zero")
			}
			body[map[string]string{paramCPU: "cpu", paramMemory: "memory", paramDisk: "disk"}[k]] = n
		case k == paramAutoStop || k == paramAutoArchive || k == paramAutoDelete:
			n, err := strconv.Atoi(v)
			if err != nil || (n < 0 && k != paramAutoDelete) {
				return nil, bad(k, "must be a whole number of minutes")
			}
			body[map[string]string{paramAutoStop: "autoStopInterval", paramAutoArchive: "autoArchiveInterval", paramAutoDelete: "autoDeleteInterval"}[k]] = n
		case k == paramBlockAll:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, bad(k, "must be true or false")
			}
			body["networkBlockAll"] = b
		case k == paramDomains:
			for _, d := range strings.Split(v, ",") {
				if !domainPattern.MatchString(strings.TrimSpace(d)) {
					return nil, bad(k, "must be host names (optionally *.suffix), comma-separated")
				}
			}
			body["domainAllowList"] = v
		case strings.HasPrefix(k, paramEnvPrefix) && len(k) > len(paramEnvPrefix):
			env[k[len(paramEnvPrefix):]] = v
		case strings.HasPrefix(k, paramLabelPrefix) && len(k) > len(paramLabelPrefix) && k != paramLabelPrefix+labelMarker:
			labels[k[len(paramLabelPrefix):]] = v
		default:
			return nil, bad(strconv.Quote(k), "is not a parameter (known: "+knownParams+")")
		}
	}
	if len(env) > 0 {
		body["env"] = env
	}
	_, image := body["buildInfo"]
	if _, cpu := body["cpu"]; !image && (cpu || body["memory"] != nil || body["disk"] != nil) {
		return nil, bad("cpu, memory_gb and disk_gb", "need an image (Daytona sizes only what it builds)")
	}
	if image && params[paramSnapshot] != "" {
		return nil, bad("snapshot and image", "exclude each other")
	}
	if image {
		delete(body, "snapshot") // an image replaces the configured snapshot
	}
	return body, nil
}

// Create makes the sandbox called name and waits until it has started, or
// adopts the one of that name (a 409, or a 400 whose probe finds it: Daytona
// checks the snapshot before the name). An adopted sandbox is left in the
// state it is in.
func (a *Adapter) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	body, err := a.createBody(name, opts.Params)
	if err != nil {
		return paddock.Handle{}, err
	}
	body["labels"] = reaping.Labels(body["labels"].(map[string]string), opts.Lease, a.cfg.MaxAge)
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPost, "/sandbox", nil, body)
	if err != nil {
		return paddock.Handle{}, err
	}
	switch {
	case status == http.StatusBadRequest || status == http.StatusConflict:
		if sb, perr := a.lookup(ctx, name); perr == nil {
			if !opts.Lease.IsZero() {
				if err := a.claim(ctx, sb, opts.Lease); err != nil {
					return paddock.Handle{}, err
				}
			}
			return a.BuildHandle(name), nil // adopted
		}
		return paddock.Handle{}, a.createError(status, header, data)
	case status < 200 || status > 299:
		return paddock.Handle{}, a.createError(status, header, data)
	}
	var sb sandbox
	if err := a.rest.Decode(data, &sb); err != nil {
		return paddock.Handle{}, err
	}
	if sb.ID == "" {
		return paddock.Handle{}, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "create answered no sandbox id"}
	}
	if _, err := a.waitFor(ctx, name, stateStarted); err != nil {
		return paddock.Handle{}, err
	}
	return a.BuildHandle(name), nil
}

// createError maps a refused create: a lack of runners or of quota is
// capacity (unavailable, transient), not the caller's mistake.
func (a *Adapter) createError(status int, header http.Header, data []byte) error {
	err := a.rest.StatusError(status, header, data)
	msg := strings.ToLower(errorMessage(data))
	if status == http.StatusBadRequest && (strings.Contains(msg, "no available runners") || strings.Contains(msg, "quota")) {
		return &paddock.UnavailableError{Detail: "daytona: no capacity: " + err.Error(), Status: status}
	}
	return err
}

// errorMessage is the message of Daytona's error body, or "".
func errorMessage(data []byte) string {
	var body struct {
		Message any `json:"message"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	return fmt.Sprint(body.Message)
}

// lookup answers the sandbox called name; ErrNotFound when there is none
// (or the name is another sandbox's id).
func (a *Adapter) lookup(ctx context.Context, name string) (*sandbox, error) {
	var raw json.RawMessage
	if err := a.rest.Found(ctx, a.client, http.MethodGet, sandboxPath(name), nil, nil, &raw); err != nil {
		return nil, err
	}
	sb := sandbox{raw: raw}
	if err := a.rest.Decode(raw, &sb); err != nil {
		return nil, err
	}
	if sb.ID == "" {
		return nil, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "a sandbox without an id"}
	}
	if sb.Name != name {
		return nil, paddock.ErrNotFound // the name resolved as another sandbox's id
	}
	return &sb, nil
}

// mustLookup is lookup after validating the handle's name.
func (a *Adapter) mustLookup(ctx context.Context, h paddock.Handle) (*sandbox, error) {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return nil, err
	}
	return a.lookup(ctx, h.Name)
}

// waitFor polls the sandbox until it reaches want, within StartTimeout: an
// errored sandbox is the provider's error, a deadline that passes is
// unavailable(timeout).
func (a *Adapter) waitFor(ctx context.Context, name, want string) (*sandbox, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.StartTimeout)
	defer cancel()
	for {
		sb, err := a.lookup(ctx, name)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, &paddock.UnavailableError{Detail: paddock.DetailTimeout + ": daytona: " + name + " did not reach " + want}
		case err != nil:
			return nil, err
		case sb.State == want:
			return sb, nil
		case failed(sb.State):
			return nil, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "sandbox " + name + " is in state " + sb.State + ": " + sb.ErrorReason}
		}
		select {
		case <-ctx.Done():
			return nil, &paddock.UnavailableError{Detail: paddock.DetailTimeout + ": daytona: " + name + " stayed " + sb.State + ", not " + want}
		case <-time.After(a.poll):
		}
	}
}

// Get reports the sandbox called name.
func (a *Adapter) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	sb, err := a.mustLookup(ctx, h)
	if err != nil {
		return paddock.Info{}, err
	}
	info := paddock.Info{Name: h.Name, ID: sb.ID, Image: sb.Snapshot, Status: paddock.StatusOf(paddock.ProviderDaytona, sb.State), Raw: sb.raw}
	if t, err := time.Parse(time.RFC3339Nano, sb.CreatedAt); err == nil {
		info.CreatedAt = t
	}
	return info, nil
}

// Destroy deletes the sandbox; an absent one is success. A delete refused
// because a transition is under way (409) is tried again once the
// sandbox settles, within StartTimeout.
func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return err
	}
	return a.settled(ctx, func() (bool, error) {
		status, header, data, err := a.rest.Call(ctx, a.client, http.MethodDelete, sandboxPath(h.Name), nil, nil)
		switch {
		case err != nil:
			return false, err
		case status == http.StatusConflict:
			return false, nil
		case status == http.StatusNotFound || (status >= 200 && status <= 299):
			return true, nil
		}
		return false, a.rest.StatusError(status, header, data)
	})
}

// settled repeats try while it reports a transition under way (false, nil),
// every poll interval, within StartTimeout.
func (a *Adapter) settled(ctx context.Context, try func() (bool, error)) error {
	deadline := time.Now().Add(a.cfg.StartTimeout)
	for {
		done, err := try()
		if done || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return &paddock.UnavailableError{Detail: paddock.DetailTimeout + ": daytona: a state change stayed in progress", Status: http.StatusConflict}
		}
		select {
		case <-ctx.Done():
			return httpx.Transport(ctx.Err())
		case <-time.After(a.poll):
		}
	}
}

// Suspend stops the sandbox (the disk is kept) and waits until it has
// stopped; a stopped or archived one is left as it is.
func (a *Adapter) Suspend(ctx context.Context, h paddock.Handle) error {
	sb, err := a.mustLookup(ctx, h)
	if err != nil {
		return err
	}
	switch sb.State {
	case stateStopped, stateArchived, "archiving":
		return nil
	}
	err = a.transition(ctx, h.Name, "stop", nil, func(status int, refusal error) (bool, error) {
		if status == http.StatusBadRequest {
			// Not stoppable: stopped meanwhile is success, anything else
			// (an errored sandbox) is the refusal.
			now, lerr := a.lookup(ctx, h.Name)
			if lerr == nil && (now.State == stateStopped || now.State == stateArchived || now.State == "archiving") {
				return true, nil
			}
		}
		return false, refusal
	})
	if err != nil {
		return err
	}
	now, err := a.lookup(ctx, h.Name)
	if err == nil && (now.State == stateArchived || now.State == "archiving") {
		return nil
	}
	_, err = a.waitFor(ctx, h.Name, stateStopped)
	return err
}

// Resume starts a stopped, archived or paused sandbox and waits until it
// has started; a started one is left as it is.
func (a *Adapter) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	if _, err := a.started(ctx, h); err != nil {
		return paddock.Handle{}, err
	}
	return a.BuildHandle(h.Name), nil
}

// started answers the started sandbox called name, starting it first
// when it is not: every toolbox operation needs a running daemon.
func (a *Adapter) started(ctx context.Context, h paddock.Handle) (*sandbox, error) {
	sb, err := a.mustLookup(ctx, h)
	if err != nil {
		return nil, err
	}
	switch {
	case sb.State == stateStarted:
		return sb, nil
	case failed(sb.State):
		return nil, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "sandbox " + h.Name + " is in state " + sb.State + ": " + sb.ErrorReason}
	case startingStates[sb.State]:
		return a.waitFor(ctx, h.Name, stateStarted) // on its way already
	}
	if err := a.transition(ctx, h.Name, "start", nil, nil); err != nil {
		return nil, err
	}
	return a.waitFor(ctx, h.Name, stateStarted)
}

// transition asks Daytona for action ("start", "stop", "snapshot") on the
// sandbox called name, with body (nil: {}), until it is taken: a 409
// (mid-transition) is asked again once the sandbox settles, a 404 is
// not_found, and any other refusal is judged by refused when there is one
// (true: done after all).
func (a *Adapter) transition(ctx context.Context, name, action string, body any, refused func(status int, refusal error) (bool, error)) error {
	if body == nil {
		body = map[string]any{}
	}
	return a.settled(ctx, func() (bool, error) {
		status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPost, sandboxPath(name, action), nil, body)
		switch {
		case err != nil:
			return false, err
		case status == http.StatusConflict:
			return false, nil
		case status == http.StatusNotFound:
			return false, paddock.ErrNotFound
		case status < 200 || status > 299:
			refusal := a.rest.StatusError(status, header, data)
			if refused != nil {
				return refused(status, refusal)
			}
			return false, refusal
		}
		return true, nil
	})
}

// listPage is one page of a listing.
type listPage struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor *string           `json:"nextCursor"`
}

// ListAllNames walks every page of our sandboxes (labelled paddock=1);
// past maxListPages it refuses with ErrTruncated rather than answer part
// of the organisation.
func (a *Adapter) ListAllNames(ctx context.Context) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	err := a.eachSandbox(ctx, func(sb sandbox) {
		if sb.Name != "" && !seen[sb.Name] {
			seen[sb.Name] = true
			names = append(names, sb.Name)
		}
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// eachSandbox calls fn on each of our sandboxes (labelled paddock=1), page
// by page; past maxListPages it refuses with ErrTruncated.
func (a *Adapter) eachSandbox(ctx context.Context, fn func(sandbox)) error {
	labels, _ := json.Marshal(map[string]string{labelMarker: "1"})
	cursor := ""
	for range maxListPages {
		q := url.Values{"labels": {string(labels)}, "limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, "/sandbox", q, nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return a.rest.StatusError(status, header, data)
		}
		var page listPage
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
			err = a.rest.Decode(data, &page.Items) // an older server's bare array: one, final page
		} else {
			err = a.rest.Decode(data, &page)
		}
		if err != nil {
			return err
		}
		for _, raw := range page.Items {
			var sb sandbox
			if err := a.rest.Decode(raw, &sb); err != nil {
				return err
			}
			fn(sb)
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
	return paddock.ErrTruncated
}

// domainPattern is a host name Daytona's domain allow list takes, with an
// optional leading "*.".
var domainPattern = regexp.MustCompile(`^(\*\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

// maxDomains is how many domains Daytona's allow list holds.
const maxDomains = 10

// ApplyNetworkPolicy replaces the sandbox's egress policy: an empty allow
// list blocks all egress (networkBlockAll), a non-empty one allows only
// those domains (domainAllowList alone, with the CIDR list cleared).
func (a *Adapter) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(p.Allow) > maxDomains {
		return &paddock.InvalidError{Detail: fmt.Sprintf("network policy: Daytona allows at most %d domains", maxDomains)}
	}
	for _, d := range p.Allow {
		if !domainPattern.MatchString(d) {
			return &paddock.InvalidError{Detail: "network policy: Daytona takes host names (optionally *.suffix), not " + strconv.Quote(d)}
		}
	}
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return err
	}
	body := map[string]any{"networkBlockAll": true, "domainAllowList": ""}
	if len(p.Allow) > 0 {
		body = map[string]any{"networkBlockAll": false, "networkAllowList": "", "domainAllowList": strings.Join(p.Allow, ",")}
	}
	return a.rest.Found(ctx, a.client, http.MethodPost, sandboxPath(h.Name, "network-settings"), nil, body, nil)
}

// toolboxURL is the base of the sandbox's toolbox: its proxy URL and id,
// or the proxy URL the control plane names when the sandbox does not.
func (a *Adapter) toolboxURL(ctx context.Context, sb *sandbox) (string, error) {
	base := sb.ToolboxProxyURL
	if base == "" {
		status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, sandboxPath(sb.ID, "toolbox-proxy-url"), nil, nil)
		if err != nil {
			return "", err
		}
		if status != http.StatusOK {
			return "", a.rest.StatusError(status, header, data)
		}
		var body struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(data, &body) != nil || body.URL == "" {
			if json.Unmarshal(data, &body.URL) != nil || body.URL == "" { // a bare string
				return "", &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "no toolbox proxy URL"}
			}
		}
		base = body.URL
	}
	return strings.TrimRight(base, "/") + "/" + httpx.Escape(sb.ID), nil
}
