package sprites

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

// maxListPages is how many pages ListAllNames walks before it refuses with
// ErrTruncated rather than return a partial view.
const maxListPages = 40

// spriteObject is the part of a sprite the adapter reads.
type spriteObject struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Status    string   `json:"status"`
	URL       string   `json:"url"`
	CreatedAt string   `json:"created_at"` // RFC 3339; read leniently, never failing a Get
	Labels    []string `json:"labels"`
}

// createBody reads the creation parameters: wait_for_capacity (true or
// false), and the machine config ram_mb, cpus, storage_gb (integers) and
// region.
func createBody(name string, opts paddock.CreateOpts) (map[string]any, error) {
	body := map[string]any{"name": name}
	config := map[string]any{}
	for k, v := range opts.Params {
		switch k {
		case "wait_for_capacity":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": wait_for_capacity is true or false"}
			}
			body[k] = b
		case "ram_mb", "cpus", "storage_gb":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": " + k + " is a positive integer"}
			}
			config[k] = n
		case "region":
			config[k] = v
		default:
			return nil, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": unknown parameter " + strconv.Quote(k)}
		}
	}
	if len(config) > 0 {
		body["config"] = config
	}
	return body, nil
}

// Create makes the sprite, or adopts it when the name exists (409). After a
// fresh create the URL is made public when PublicURLs is on; that write is
// best effort (a failure is logged, the create still succeeds).
func (a *Adapter) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	body, err := createBody(name, opts)
	if err != nil {
		return paddock.Handle{}, err
	}
	if !opts.Lease.IsZero() {
		body["labels"] = a.createLabels(opts.Lease)
	}
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPost, "/v1/sprites", nil, body)
	switch {
	case err != nil:
		return paddock.Handle{}, err
	case status == http.StatusConflict:
		if !opts.Lease.IsZero() { // adopt: this runtime holds it now
			obj, _, err := a.get(ctx, name)
			if err != nil {
				return paddock.Handle{}, err
			}
			if err := a.claim(ctx, obj, opts.Lease); err != nil {
				return paddock.Handle{}, err
			}
		}
		return a.BuildHandle(name), nil // adopt; the URL setting is left alone
	case status < 200 || status > 299:
		return paddock.Handle{}, statusError(status, header, data)
	}
	if *a.cfg.PublicURLs {
		if err := a.setURLAuth(ctx, name, "public"); err != nil {
			a.log.Warn().Str("sprite", name).Str("error", err.Error()).Msg("sprites: making the URL public failed; the sprite was created")
		}
	}
	return a.BuildHandle(name), nil
}

// setURLAuth writes the sprite's URL setting.
func (a *Adapter) setURLAuth(ctx context.Context, name, auth string) error {
	return a.rest.JSON(ctx, a.client, http.MethodPut, spritePath(name), nil, map[string]any{"url_settings": map[string]string{"auth": auth}}, nil)
}

// get reads the sprite object and its raw body.
func (a *Adapter) get(ctx context.Context, name string) (spriteObject, []byte, error) {
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, spritePath(name), nil, nil)
	if err != nil {
		return spriteObject{}, nil, err
	}
	if status != http.StatusOK {
		return spriteObject{}, nil, statusError(status, header, data)
	}
	var obj spriteObject
	if err := json.Unmarshal(data, &obj); err != nil {
		return spriteObject{}, nil, &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "malformed sprite: " + err.Error()}
	}
	return obj, data, nil
}

// statusOf maps a sprite's status word: running/ready/active are running;
// suspended/paused/stopped, and the parked states warm and cold, are
// suspended; anything else is unknown.
func statusOf(state string) paddock.Status {
	if state == "warm" || state == "cold" {
		return paddock.StatusSuspended
	}
	return paddock.StatusOf(paddock.ProviderSprites, state)
}

// Get reports the sprite's name, id, status and creation time (Sprites has
// no image: Image is empty); Raw is the provider's object. Only a 404 is
// not_found; a 5xx (even for an absent sprite) is unavailable.
func (a *Adapter) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	obj, raw, err := a.get(ctx, h.Name)
	if err != nil {
		return paddock.Info{}, err
	}
	created, _ := time.Parse(time.RFC3339, obj.CreatedAt)
	return paddock.Info{Name: obj.Name, ID: obj.ID, Status: statusOf(obj.Status), CreatedAt: created, Raw: raw}, nil
}

// Destroy deletes the sprite; absent (404) is fine.
func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodDelete, spritePath(h.Name), nil, nil)
	if err != nil {
		return err
	}
	if status == http.StatusNotFound || (status >= 200 && status <= 299) {
		return nil
	}
	return statusError(status, header, data)
}

// ListAllNames walks the pages while has_more and a continuation token
// come back, and refuses (ErrTruncated) past 40 pages.
func (a *Adapter) ListAllNames(ctx context.Context) ([]string, error) {
	names := []string{}
	if err := a.eachSprite(ctx, func(s spriteObject) { names = append(names, s.Name) }); err != nil {
		return nil, err
	}
	return names, nil
}

// eachSprite calls fn on every sprite of the organisation, page by page;
// past 40 pages it refuses with ErrTruncated.
func (a *Adapter) eachSprite(ctx context.Context, fn func(spriteObject)) error {
	token := ""
	for page := 0; page < maxListPages; page++ {
		q := url.Values{}
		if token != "" {
			q.Set("continuation_token", token)
		}
		var res struct {
			Sprites *[]spriteObject `json:"sprites"`
			HasMore bool            `json:"has_more"`
			Next    *string         `json:"next_continuation_token"`
		}
		if err := a.rest.JSON(ctx, a.client, http.MethodGet, "/v1/sprites", q, nil, &res); err != nil {
			return err
		}
		if res.Sprites == nil {
			// A page without its list is not an empty account.
			return &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "malformed list page: no sprites array"}
		}
		for _, s := range *res.Sprites {
			if s.Name == "" {
				return &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "malformed list page: a sprite without a name"}
			}
			fn(s)
		}
		if !res.HasMore || res.Next == nil || *res.Next == "" {
			return nil
		}
		token = *res.Next
	}
	return paddock.ErrTruncated
}

// Suspend confirms the sprite exists: Sprites parks idle sprites itself.
func (a *Adapter) Suspend(ctx context.Context, h paddock.Handle) error {
	_, _, err := a.get(ctx, h.Name)
	return err
}

// Resume probes the sprite; the next command wakes it.
func (a *Adapter) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	if _, _, err := a.get(ctx, h.Name); err != nil {
		return paddock.Handle{}, err
	}
	return h, nil
}

// PublicURL returns the sprite's URL, or ErrNoPublicURL when it has none.
func (a *Adapter) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	obj, _, err := a.get(ctx, h.Name)
	if err != nil {
		return "", err
	}
	if obj.URL == "" {
		return "", paddock.ErrNoPublicURL
	}
	return obj.URL, nil
}

// rule is one egress rule.
type rule struct {
	Domain string `json:"domain"`
	Action string `json:"action"`
}

// policyRules compiles an allow list: each domain allowed, and an empty
// list a standalone deny of "*" (Sprites reads no rules as no enforcement).
func policyRules(p paddock.NetworkPolicy) []rule {
	if len(p.Allow) == 0 {
		return []rule{{Domain: "*", Action: "deny"}}
	}
	rules := make([]rule, 0, len(p.Allow))
	for _, d := range p.Allow {
		rules = append(rules, rule{Domain: d, Action: "allow"})
	}
	return rules
}

// ApplyNetworkPolicy sets the egress policy, on a client of its own with
// the long policy timeout (a booting sprite answers late).
func (a *Adapter) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	status, header, data, err := a.rest.Call(ctx, a.policy, http.MethodPost, spritePath(h.Name, "policy", "network"), nil, map[string]any{"rules": policyRules(p)})
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return statusError(status, header, data)
	}
	return nil
}

// CreateNew makes one creation attempt that never adopts
// (docs/contract.md#bounded-sprites):
// one POST carrying the URL setting, within the timeout and a 64 KiB
// budget, no retries, no redirects. 409 is already_exists; a 2xx must echo
// the name and carry an id of 1..256 bytes; any other status is judged by
// the status alone (no provider prose).
func (a *Adapter) CreateNew(ctx context.Context, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	opts, err := paddock.ValidateCreateNew(name, opts)
	if err != nil {
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
	ctx, cancel, err := opts.Bound(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if a.cfg.Token.IsZero() {
		return errNoToken
	}
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
