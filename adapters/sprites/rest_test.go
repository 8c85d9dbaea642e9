package sprites_test

// What the adapter relies on of Sprites' REST API, each a test against
// spritestest through the adapter (and, where it is about the wire, the
// server's request log or a raw request).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// rawRequest sends one request to srv with its token (or none).
func rawRequest(t testing.TB, srv *spritestest.Server, method, path string, withToken bool) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+path, nil)
	require.NoError(t, err)
	if withToken {
		req.Header.Set("Authorization", "Bearer "+srv.Token())
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// Auth: every route wants the bearer token; a wrong one is denied
// with exactly one request per call, and a missing one never leaves the
// process.
func TestAuthIsRequiredEverywhere(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddSprite("box")
	wrong := build(t, sprites.Config{Token: paddock.NewSecret(captured.Secret("wrong-token-" + srv.Token()[:8])),
		BaseURL: srv.URL(), Logger: testLogger(), CheckpointCreation: true})
	none := build(t, sprites.Config{BaseURL: srv.URL(), CheckpointCreation: true})
	h := wrong.BuildHandle("box")
	ctx := ctxFor(t, 20*time.Second)
	calls := map[string]func(a *sprites.Adapter) error{
		"Create":  func(a *sprites.Adapter) error { _, err := a.Create(ctx, "other", paddock.CreateOpts{}); return err },
		"Get":     func(a *sprites.Adapter) error { _, err := a.Get(ctx, h); return err },
		"Destroy": func(a *sprites.Adapter) error { return a.Destroy(ctx, h) },
		"ListAll": func(a *sprites.Adapter) error { _, err := a.ListAllNames(ctx); return err },
		"Exec": func(a *sprites.Adapter) error {
			_, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
			return err
		},
		"Spawn": func(a *sprites.Adapter) error {
			_, err := a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{})
			return err
		},
		"Attach":    func(a *sprites.Adapter) error { _, err := a.Attach(ctx, h, "20", paddock.AttachOpts{}); return err },
		"Sessions":  func(a *sprites.Adapter) error { _, err := a.ListSessions(ctx, h); return err },
		"Policy":    func(a *sprites.Adapter) error { return a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{}) },
		"WriteFile": func(a *sprites.Adapter) error { return a.WriteFile(ctx, h, "/f", 0o644, strings.NewReader("x")) },
		"ReadFile":  func(a *sprites.Adapter) error { _, err := a.ReadFile(ctx, h, "/f"); return err },
		"Checkpoint": func(a *sprites.Adapter) error {
			_, err := a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			return err
		},
		"Checkpoints": func(a *sprites.Adapter) error { _, err := a.ListCheckpoints(ctx, h); return err },
		"Restore":     func(a *sprites.Adapter) error { return a.RestoreCheckpoint(ctx, h, "v0") },
		"PublicURL":   func(a *sprites.Adapter) error { _, err := a.PublicURL(ctx, h); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			before := len(srv.Requests())
			err := call(wrong)
			requireKind(t, err, paddock.ErrDenied)
			require.Len(t, srv.Requests(), before+1, "one request, no retry")
			err = call(none)
			requireKind(t, err, paddock.ErrDenied)
			require.Contains(t, err.Error(), "no token")
			require.Len(t, srv.Requests(), before+1, "without a token nothing is sent")
		})
	}
	res := rawRequest(t, srv, http.MethodGet, "/v1/sprites", false)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	body, _ := io.ReadAll(res.Body)
	require.JSONEq(t, `{"error":"authentication failed"}`, string(body))
}

// Path handling: names are percent-encoded on the way out and
// decoded by the server.
func TestPathSegmentsAreEncoded(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddSprite("owned worker")
	a := newAdapter(t, srv, withCheckpoints)
	h := a.BuildHandle("owned worker")
	ctx := ctxFor(t, 10*time.Second)
	_, err := a.Get(ctx, h)
	require.NoError(t, err)
	_, err = a.CreateCheckpointOnce(ctx, h, paddock.CheckpointOnceOpts{OperationID: "enc"})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/a b.txt", 0o644, strings.NewReader("spaced")))
	for _, r := range srv.Requests() {
		require.True(t, strings.HasPrefix(r.RawPath, "/v1/sprites/owned%20worker"), r.RawPath)
		require.True(t, strings.HasPrefix(r.Path, "/v1/sprites/owned worker"), r.Path)
	}
	b, ok := srv.File("owned worker", "/tmp/a b.txt")
	require.True(t, ok)
	require.Equal(t, "spaced", string(b))
}

// Sprite registry: create answers 201 with the full object, stores
// the URL setting; duplicates are 409 (adopted by Create), bad names 400.
func TestCreateAndTheRegistry(t *testing.T) {
	t.Parallel()
	no := false
	cases := []struct {
		name     string
		edit     func(*sprites.Config)
		wantAuth string
		routes   []string
	}{
		{"public URLs by default", func(*sprites.Config) {}, "public", []string{"POST /v1/sprites", "PUT /v1/sprites/{name}"}},
		{"organisation-only URLs", func(c *sprites.Config) { c.PublicURLs = &no }, "sprite", []string{"POST /v1/sprites"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t)
			a := newAdapter(t, srv, c.edit)
			ctx := ctxFor(t, 10*time.Second)
			h, err := a.Create(ctx, "box", paddock.CreateOpts{Params: map[string]string{"wait_for_capacity": "true", "ram_mb": "2048", "region": "ams"}})
			require.NoError(t, err)
			require.Equal(t, paddock.Handle{Provider: paddock.ProviderSprites, Name: "box"}, h)
			requireRequests(t, srv, c.routes...)
			require.JSONEq(t, `{"name":"box","wait_for_capacity":true,"config":{"ram_mb":2048,"region":"ams"}}`, srv.Requests()[0].Body)
			require.Equal(t, c.wantAuth, srv.URLAuth("box"))

			info, err := a.Get(ctx, h)
			require.NoError(t, err)
			var obj map[string]any
			require.NoError(t, json.Unmarshal(info.Raw, &obj))
			require.Regexp(t, `^sprite-[0-9a-f-]{36}$`, obj["id"])
			require.Equal(t, "cold", obj["status"], "a new sprite is cold")
			require.Equal(t, map[string]any{"auth": c.wantAuth}, obj["url_settings"])
			for _, field := range []string{"url", "created_at", "updated_at", "organization", "config"} {
				require.Contains(t, obj, field)
			}
			require.EqualValues(t, 2048, obj["config"].(map[string]any)["ram_mb"])

			// The same name again is adopted: one POST answered 409, the
			// URL left alone.
			before := len(srv.Requests())
			_, err = a.Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			require.Len(t, srv.Requests(), before+1)
		})
	}
	t.Run("bad parameters never reach the provider", func(t *testing.T) {
		srv := newServer(t)
		a := newAdapter(t, srv)
		for _, params := range []map[string]string{{"wait_for_capacity": "maybe"}, {"cpus": "0"}, {"ram_mb": "lots"}, {"image": "x"}} {
			_, err := a.Create(ctxFor(t, 5*time.Second), "box", paddock.CreateOpts{Params: params})
			requireKind(t, err, paddock.ErrInvalid)
		}
		requireRequests(t, srv)
	})
	t.Run("a name the provider refuses is invalid", func(t *testing.T) {
		srv := newServer(t)
		_, err := newAdapter(t, srv).Create(ctxFor(t, 5*time.Second), "Not_A_Host", paddock.CreateOpts{})
		requireKind(t, err, paddock.ErrInvalid)
		require.Contains(t, err.Error(), "invalid sprite name format")
	})
	t.Run("a failed URL write is logged, the create stands", func(t *testing.T) {
		srv := newServer(t)
		srv.Fail("PUT /v1/sprites/{name}", spritestest.Status(503))
		lines := captured.Lines()
		_, err := newAdapter(t, srv).Create(ctxFor(t, 5*time.Second), "box", paddock.CreateOpts{})
		require.NoError(t, err)
		require.True(t, srv.Exists("box"))
		require.Equal(t, "sprite", srv.URLAuth("box"))
		require.Greater(t, captured.Lines(), lines)
	})
	t.Run("a conflict sent as 400 is not adopted", func(t *testing.T) {
		srv := newServer(t)
		srv.Fail("POST /v1/sprites", spritestest.Body(400, `{"errors":["A sprite with this name already exists"]}`))
		_, err := newAdapter(t, srv).Create(ctxFor(t, 5*time.Second), "box", paddock.CreateOpts{})
		requireKind(t, err, paddock.ErrInvalid)
	})
}

// GET, PUT, DELETE: 200 or 404; DELETE answers 204 and GET is then
// 404; deleting again is tolerated.
func TestGetAndDestroy(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	ctx := ctxFor(t, 10*time.Second)
	_, err := a.Get(ctx, a.BuildHandle("never"))
	requireKind(t, err, paddock.ErrNotFound)
	h := create(t, a, "box")
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	require.Equal(t, "box", info.Name)
	require.NotEmpty(t, info.ID, "the sprite's own id")
	require.WithinDuration(t, time.Now(), info.CreatedAt, time.Minute)
	require.Empty(t, info.Image, "Sprites has no image")
	require.NoError(t, a.Destroy(ctx, h))
	_, err = a.Get(ctx, h)
	requireKind(t, err, paddock.ErrNotFound)
	require.NoError(t, a.Destroy(ctx, h), "absence is tolerated")
	require.Equal(t, 2, srv.Count("DELETE /v1/sprites/{name}"))

	res := rawRequest(t, srv, http.MethodDelete, "/v1/sprites/other", true)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// The January 2026 quirk: an absent sprite answered 500. It must not
// read as absence (Get) nor as success (Destroy).
func TestAbsentAnsweredAs500(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	ctx := ctxFor(t, 10*time.Second)
	srv.Fail("GET /v1/sprites/{name}", spritestest.Body(500, `{"error":"failed to retrieve sprite"}`))
	_, err := a.Get(ctx, a.BuildHandle("gone"))
	requireKind(t, err, paddock.ErrUnavailable)
	require.NotErrorIs(t, err, paddock.ErrNotFound)
	srv.Fail("DELETE /v1/sprites/{name}", spritestest.Body(500, `{"error":"failed to delete sprite"}`))
	requireKind(t, a.Destroy(ctx, a.BuildHandle("gone")), paddock.ErrUnavailable)
}

// List pagination: pages of at most 50 chained by a token until the
// last page; ListAllNames sees every name.
func TestListPagination(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	want := make([]string, 0, 120)
	for i := range 120 {
		name := fmt.Sprintf("box-%03d", i)
		srv.AddSprite(name)
		want = append(want, name)
	}
	got, err := a.ListAllNames(ctxFor(t, 10*time.Second))
	require.NoError(t, err)
	require.Equal(t, want, got)
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "pages of 50")
	require.Empty(t, reqs[0].Query)
	require.Contains(t, reqs[1].Query, "continuation_token=")

	for _, q := range []struct{ query, first, last string }{
		{"max_results=100", "box-000", "box-049"},
		{"max_results=0", "box-000", "box-000"},
		{"max_results=2&prefix=box-11", "box-110", "box-111"},
	} {
		res := rawRequest(t, srv, http.MethodGet, "/v1/sprites?"+q.query, true)
		var page struct {
			Sprites []struct{ Name string }
			HasMore bool    `json:"has_more"`
			Next    *string `json:"next_continuation_token"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&page))
		require.Equal(t, q.first, page.Sprites[0].Name, q.query)
		require.Equal(t, q.last, page.Sprites[len(page.Sprites)-1].Name, q.query)
		require.True(t, page.HasMore)
		require.NotNil(t, page.Next)
	}
}

// Pagination faults.
func TestListPaginationFaults(t *testing.T) {
	t.Parallel()
	page := func(more bool, token any, names ...string) spritestest.Fault {
		entries := make([]map[string]string, 0, len(names))
		for _, n := range names {
			entries = append(entries, map[string]string{"name": n})
		}
		b, _ := json.Marshal(map[string]any{"sprites": entries, "has_more": more, "next_continuation_token": token})
		return spritestest.Body(200, string(b))
	}
	cases := []struct {
		name   string
		pages  []spritestest.Fault
		want   []string
		err    error
		tokens []string
	}{
		{"pages keyed by token", []spritestest.Fault{page(true, "tok-1", "a", "b"), page(true, "tok-2", "c", "d"), page(false, nil, "e")},
			[]string{"a", "b", "c", "d", "e"}, nil, []string{"", "continuation_token=tok-1", "continuation_token=tok-2"}},
		{"has_more without a token", []spritestest.Fault{{Status: 200, Body: `{"sprites":[{"name":"a"}],"has_more":true}`}}, []string{"a"}, nil, []string{""}},
		{"has_more with a null token", []spritestest.Fault{page(true, nil, "a")}, []string{"a"}, nil, []string{""}},
		{"has_more with an empty token", []spritestest.Fault{page(true, "", "a")}, []string{"a"}, nil, []string{""}},
		{"500 mid-walk", []spritestest.Fault{page(true, "tok-1", "a"), spritestest.Body(500, "boom")}, nil, paddock.ErrUnavailable, []string{"", "continuation_token=tok-1"}},
		{"not JSON", []spritestest.Fault{spritestest.Body(200, "not json")}, nil, paddock.ErrProvider, []string{""}},
	}
	endless := make([]spritestest.Fault, 41)
	tokens := make([]string, 40)
	for i := range endless {
		endless[i] = page(true, fmt.Sprintf("tok-%d", i+1), fmt.Sprintf("n%d", i))
	}
	for i := range tokens {
		if i > 0 {
			tokens[i] = fmt.Sprintf("continuation_token=tok-%d", i)
		}
	}
	cases = append(cases, struct {
		name   string
		pages  []spritestest.Fault
		want   []string
		err    error
		tokens []string
	}{"an endless chain stops at 40 pages", endless, nil, paddock.ErrTruncated, tokens})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t)
			for _, p := range c.pages {
				srv.Fail("GET /v1/sprites", p)
			}
			got, err := newAdapter(t, srv).ListAllNames(ctxFor(t, 10*time.Second))
			if c.err != nil {
				requireKind(t, err, c.err)
				require.Nil(t, got, "never a partial set")
			} else {
				require.NoError(t, err)
				require.Equal(t, c.want, got)
			}
			var queries []string
			for _, r := range srv.Requests() {
				queries = append(queries, r.Query)
			}
			require.Equal(t, c.tokens, queries)
		})
	}
}

// Status lifecycle, and the neutral status (docs/contract.md#vocabulary): cold until
// used, running while busy, warm then cold when idle (both suspended);
// other words map as documented, unknown ones keep the raw object.
func TestStatusLifecycle(t *testing.T) {
	t.Parallel()
	srv := newServer(t, spritestest.WithIdle(300*time.Millisecond, 300*time.Millisecond))
	a := newAdapter(t, srv)
	ctx := ctxFor(t, 20*time.Second)
	h := create(t, a, "box")
	status := func() paddock.Status {
		info, err := a.Get(ctx, h)
		require.NoError(t, err)
		return info.Status
	}
	require.Equal(t, "cold", srv.Status("box"))
	require.Equal(t, paddock.StatusSuspended, status())

	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo up; exec cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	require.Equal(t, "running", srv.Status("box"), "a connected session keeps it running")
	require.Equal(t, paddock.StatusRunning, status())
	require.NoError(t, st.Close())
	require.Eventually(t, func() bool { return srv.Status("box") == "warm" }, time.Minute, 20*time.Millisecond,
		"a detached session does not keep the sprite awake")
	require.Equal(t, paddock.StatusSuspended, status())
	require.Eventually(t, func() bool { return srv.Status("box") == "cold" }, time.Minute, 20*time.Millisecond)

	for word, want := range map[string]paddock.Status{
		"running": paddock.StatusRunning, "ready": paddock.StatusRunning, "active": paddock.StatusRunning,
		"suspended": paddock.StatusSuspended, "paused": paddock.StatusSuspended, "stopped": paddock.StatusSuspended,
		"warm": paddock.StatusSuspended, "cold": paddock.StatusSuspended, "hatching": paddock.StatusUnknown,
	} {
		srv.SetStatus("box", word)
		info, err := a.Get(ctx, h)
		require.NoError(t, err)
		require.Equal(t, want, info.Status, word)
		require.Contains(t, string(info.Raw), `"status":"`+word+`"`, "the raw object is kept")
	}
}

// Suspend and Resume: Sprites parks itself; both only probe.
func TestSuspendAndResumeProbe(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	ctx := ctxFor(t, 10*time.Second)
	h := create(t, a, "box")
	before := len(srv.Requests())
	require.NoError(t, a.Suspend(ctx, h))
	got, err := a.Resume(ctx, h)
	require.NoError(t, err)
	require.Equal(t, h, got)
	requireRequests(t, srv, append(routesOf(srv.Requests()[:before]), "GET /v1/sprites/{name}", "GET /v1/sprites/{name}")...)
	requireKind(t, a.Suspend(ctx, a.BuildHandle("gone")), paddock.ErrNotFound)
	_, err = a.Resume(ctx, a.BuildHandle("gone"))
	requireKind(t, err, paddock.ErrNotFound)
}

func routesOf(reqs []spritestest.Request) []string {
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.Route)
	}
	return out
}

// The public URL is the sprite's url.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	srv, a, h := onBox(t)
	u, err := a.PublicURL(ctxFor(t, 5*time.Second), h)
	require.NoError(t, err)
	require.Regexp(t, `^https://box-[a-z0-9]+\.sprites\.app$`, u)
	srv.Fail("GET /v1/sprites/{name}", spritestest.Body(200, `{"name":"box","id":"sprite-1","url":""}`))
	_, err = a.PublicURL(ctxFor(t, 5*time.Second), h)
	require.ErrorIs(t, err, paddock.ErrNoPublicURL, "no URL is unsupported, not a guess")
}

// Headers: Sprite-Version on sprite routes, NDJSON streams typed;
// HEAD /exec answers with the version; /control is a WebSocket (400 for a
// plain request), 404 where the sprite has no control connections.
func TestHeadersHeadAndControl(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddSprite("box")
	res := rawRequest(t, srv, http.MethodHead, "/v1/sprites/box/exec", true)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, spritestest.SpriteVersion, res.Header.Get("Sprite-Version"))
	res = rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/control", true)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	without := newServer(t, spritestest.WithoutControl())
	without.AddSprite("box")
	res = rawRequest(t, without, http.MethodGet, "/v1/sprites/box/control", true)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	res = rawRequest(t, srv, http.MethodGet, "/v1/sprites/box", true)
	require.Equal(t, spritestest.SpriteVersion, res.Header.Get("Sprite-Version"))
	require.Equal(t, "application/json; charset=utf-8", res.Header.Get("Content-Type"))
	res = rawRequest(t, srv, http.MethodPost, "/v1/sprites/box/checkpoint", true)
	require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
	body, _ := io.ReadAll(res.Body)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	require.Greater(t, len(lines), 1)
	require.Contains(t, lines[len(lines)-1], `"type":"complete"`)
	require.Contains(t, lines[len(lines)-1], `"data":"Checkpoint v1 created successfully"`)
}

// Network policy: an empty allow list is a standalone deny of "*";
// an allow list is one allow rule per domain; the server validates shape
// and answers 204; a 400 is invalid. The policy call has its own, longer
// timeout.
func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	ctx := ctxFor(t, 10*time.Second)
	h := create(t, a, "box")
	require.JSONEq(t, `[]`, string(srv.Policy("box")), "no rules: no enforcement")
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{}}))
	require.JSONEq(t, `[{"domain":"*","action":"deny"}]`, string(srv.Policy("box")), "deny all, no include")
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"api.example.com", "*.npmjs.org"}}))
	require.JSONEq(t, `[{"domain":"api.example.com","action":"allow"},{"domain":"*.npmjs.org","action":"allow"}]`, string(srv.Policy("box")))

	res := rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/policy/network", true)
	got, _ := io.ReadAll(res.Body)
	require.JSONEq(t, `{"rules":[{"domain":"api.example.com","action":"allow"},{"domain":"*.npmjs.org","action":"allow"}]}`, string(got))

	for _, bad := range []string{`{}`, `{"rules":[{"domain":"x"}]}`, `{"rules":[{"domain":"x","action":"maybe"}]}`, `{"rules":[{"include":"all"}]}`, `not json`} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/sprites/box/policy/network", strings.NewReader(bad))
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode, bad)
	}
	srv.Fail("POST /v1/sprites/{name}/policy/network", spritestest.Status(400))
	requireKind(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{}), paddock.ErrInvalid)
	requireKind(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"http://x/y"}}), paddock.ErrInvalid)
}

// Slow policy POST: a booting sprite answers late; the policy call
// waits on its own timeout (the ordinary one is shorter), on a connection
// no later call reuses.
func TestSlowPolicyPost(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddSprite("box")
	const route = "POST /v1/sprites/{name}/policy/network"
	fast := newAdapter(t, srv, func(c *sprites.Config) { c.Timeout = 300 * time.Millisecond; c.PolicyTimeout = 5 * time.Second })
	srv.Fail(route, spritestest.Fault{Delay: time.Second})
	require.NoError(t, fast.ApplyNetworkPolicy(ctxFor(t, 10*time.Second), fast.BuildHandle("box"), paddock.NetworkPolicy{}))

	// The policy timeout must also let the next, prompt call finish on a
	// loaded machine, so it is seconds, and the stall outlasts it.
	short := newAdapter(t, srv, func(c *sprites.Config) { c.PolicyTimeout = 2 * time.Second })
	srv.Fail(route, spritestest.Fault{Delay: 5 * time.Second, Status: 204})
	err := short.ApplyNetworkPolicy(ctxFor(t, 10*time.Second), short.BuildHandle("box"), paddock.NetworkPolicy{})
	requireKind(t, err, paddock.ErrUnavailable)
	// The late 204 must not be read as the answer to the next call.
	srv.Fail(route, spritestest.Status(400))
	requireKind(t, short.ApplyNetworkPolicy(ctxFor(t, 10*time.Second), short.BuildHandle("box"), paddock.NetworkPolicy{}), paddock.ErrInvalid)
}

// fs write and read: the raw body with mode and parent creation; the
// server's copy is what was sent; a missing file is not_found.
func TestFiles(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	ctx := ctxFor(t, 10*time.Second)
	h := create(t, a, "box")
	data := bytes.Repeat([]byte("0123456789"), 1000)
	require.NoError(t, a.WriteFile(ctx, h, "/home/sprite/a/b/c.txt", 0o600, bytes.NewReader(data)))
	reqs := srv.Requests()
	put, rename := reqs[len(reqs)-2], reqs[len(reqs)-1]
	require.Equal(t, "PUT /v1/sprites/{name}/fs/write", put.Route)
	q, err := url.ParseQuery(put.Query)
	require.NoError(t, err)
	require.True(t, paddock.IsStagingPath(q.Get("path")), "the bytes go to a staging file first: %s", q.Get("path"))
	require.Equal(t, "/home/sprite/a/b", path.Dir(q.Get("path")))
	require.Equal(t, url.Values{"mkdirParents": {"true"}, "mode": {"0600"}, "path": {q.Get("path")}, "workingDir": {"/"}}, q)
	require.Equal(t, "POST /v1/sprites/{name}/fs/rename", rename.Route, "then it is renamed over the path")
	stored, ok := srv.File("box", "/home/sprite/a/b/c.txt")
	require.True(t, ok)
	require.Equal(t, data, stored)
	rc, err := a.ReadFile(ctx, h, "/home/sprite/a/b/c.txt")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, data, got)
	_, err = a.ReadFile(ctx, h, "/home/sprite/none")
	requireKind(t, err, paddock.ErrNotFound)
	requireKind(t, a.WriteFile(ctx, h, "relative", 0o644, strings.NewReader("x")), paddock.ErrInvalid)

	// The docs' spelling of the parent flag is accepted too.
	req, _ := http.NewRequest(http.MethodPut, srv.URL()+"/v1/sprites/box/fs/write?path=/x/y/z&mkdir=true", strings.NewReader("z"))
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var answer map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&answer))
	_ = res.Body.Close()
	require.Equal(t, map[string]any{"path": "/x/y/z", "size": 1.0, "mode": "0644"}, answer)
}

// Errors: a 429 carries its retry hint, from the body first, else
// the Retry-After header; 5xx is unavailable; bodies become short details.
func TestErrorNormalisation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fault spritestest.Fault
		kind  error
		retry *time.Duration
	}{
		{"429 body hint", spritestest.RateLimited(7), paddock.ErrRateLimited, paddock.Duration(7 * time.Second)},
		{"429 header only", spritestest.Fault{Status: 429, Body: `{"error":"concurrent_sprite_limit_exceeded"}`, Header: http.Header{"Retry-After": {"3"}}}, paddock.ErrRateLimited, paddock.Duration(3 * time.Second)},
		{"429 without a hint", spritestest.Fault{Status: 429, Body: `{"error":"slow down"}`}, paddock.ErrRateLimited, nil},
		{"401", spritestest.Status(401), paddock.ErrDenied, nil},
		{"403", spritestest.Status(403), paddock.ErrDenied, nil},
		{"404", spritestest.Status(404), paddock.ErrNotFound, nil},
		{"500", spritestest.Status(500), paddock.ErrUnavailable, nil},
		{"503", spritestest.Status(503), paddock.ErrUnavailable, nil},
		{"302", spritestest.Redirect(), paddock.ErrInvalid, nil},
		{"422", spritestest.Status(422), paddock.ErrInvalid, nil},
		{"not JSON with 200", spritestest.Body(200, "<html>"), paddock.ErrProvider, nil},
		{"reset", spritestest.Fault{Reset: true}, paddock.ErrUnavailable, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t)
			srv.AddSprite("box")
			a := newAdapter(t, srv)
			srv.Fail("GET /v1/sprites/{name}", c.fault)
			_, err := a.Get(ctxFor(t, 5*time.Second), a.BuildHandle("box"))
			captured.Err(err)
			require.ErrorIs(t, err, c.kind)
			var rl *paddock.RateLimitedError
			if c.kind == paddock.ErrRateLimited {
				require.ErrorAs(t, err, &rl)
				require.Equal(t, c.retry, rl.RetryAfter)
			}
			require.Len(t, srv.Requests(), 1, "ordinary calls are not retried by the adapter")
		})
	}
	t.Run("a timeout", func(t *testing.T) {
		srv := newServer(t)
		srv.AddSprite("box")
		a := newAdapter(t, srv, func(c *sprites.Config) { c.Timeout = 200 * time.Millisecond })
		srv.Fail("GET /v1/sprites/{name}", spritestest.Stall())
		_, err := a.Get(ctxFor(t, 5*time.Second), a.BuildHandle("box"))
		requireKind(t, err, paddock.ErrUnavailable)
		require.Contains(t, err.Error(), paddock.DetailTimeout)
	})
}

// Malformed JSON on the JSON endpoints: unparsable, the wrong
// top-level type, missing fields. Each is a provider error, never a
// silently empty answer.
func TestMalformedJSON(t *testing.T) {
	t.Parallel()
	calls := []struct {
		route string
		call  func(a *sprites.Adapter, h paddock.Handle) error
	}{
		{"GET /v1/sprites/{name}", func(a *sprites.Adapter, h paddock.Handle) error {
			_, err := a.Get(ctxFor(t, 5*time.Second), h)
			return err
		}},
		{"GET /v1/sprites", func(a *sprites.Adapter, _ paddock.Handle) error {
			_, err := a.ListAllNames(ctxFor(t, 5*time.Second))
			return err
		}},
		{"GET /v1/sprites/{name}/exec", func(a *sprites.Adapter, h paddock.Handle) error {
			_, err := a.ListSessions(ctxFor(t, 5*time.Second), h)
			return err
		}},
		{"GET /v1/sprites/{name}/checkpoints", func(a *sprites.Adapter, h paddock.Handle) error {
			_, err := a.ListCheckpoints(ctxFor(t, 5*time.Second), h)
			return err
		}},
	}
	bodies := map[string]string{"unparsable": "{not json", "wrong top-level type": `"text"`, "truncated": `{"sprites":[`}
	for _, c := range calls {
		for name, body := range bodies {
			t.Run(c.route+"/"+name, func(t *testing.T) {
				srv := newServer(t)
				srv.AddSprite("box")
				a := newAdapter(t, srv, withCheckpoints)
				srv.Fail(c.route, spritestest.Body(200, body))
				requireKind(t, c.call(a, a.BuildHandle("box")), paddock.ErrProvider)
			})
		}
	}
	missing := []struct {
		route, body string
		call        func(a *sprites.Adapter, h paddock.Handle) error
	}{
		{"GET /v1/sprites", `{}`, calls[1].call},
		{"GET /v1/sprites", `{"sprites":[{"id":"sprite-1"}]}`, calls[1].call},
		{"GET /v1/sprites", `[]`, calls[1].call},
		{"GET /v1/sprites/{name}/exec", `{}`, calls[2].call},
		{"GET /v1/sprites/{name}/checkpoints", `{}`, calls[3].call},
		{"GET /v1/sprites/{name}/checkpoints", `[{"comment":"no id"}]`, calls[3].call},
		{"GET /v1/sprites/{name}", `[]`, calls[0].call},
	}
	for _, c := range missing {
		t.Run(c.route+"/missing fields "+c.body, func(t *testing.T) {
			srv := newServer(t)
			srv.AddSprite("box")
			a := newAdapter(t, srv, withCheckpoints)
			srv.Fail(c.route, spritestest.Body(200, c.body))
			requireKind(t, c.call(a, a.BuildHandle("box")), paddock.ErrProvider)
		})
	}
}

// The token is only ever in request headers: no printed form of the
// configuration or the adapter shows it, nor does any error.
func TestTheTokenNeverShows(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cfg := sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL(), Logger: testLogger()}
	a := build(t, cfg)
	adaptertest.Hidden(t, srv.Token(), a, cfg)
	// Errors from every layer: HTTP, WebSocket, bounded, transport.
	ctx := ctxFor(t, 10*time.Second)
	_, err := a.Get(ctx, a.BuildHandle("absent"))
	captured.Err(err)
	_, err = a.Spawn(ctx, a.BuildHandle("absent"), paddock.NewCmd("true"), paddock.SpawnOpts{})
	captured.Err(err)
	_, err = a.CreateNew(ctx, "x", paddock.CreateNewOpts{})
	captured.Err(err)
	dead := build(t, sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: "http://127.0.0.1:1", Logger: testLogger()})
	_, err = dead.Get(ctx, dead.BuildHandle("x"))
	requireKind(t, err, paddock.ErrUnavailable)
	_, err = dead.Exec(ctx, dead.BuildHandle("x"), paddock.NewCmd("true"), paddock.ExecOpts{})
	requireKind(t, err, paddock.ErrUnavailable)
	require.Zero(t, captured.Leaks(), "so far, no token in any log line or error")
	require.Positive(t, captured.Lines(), "the adapters did log")
}

// Unset fields take their defaults; a missing token is a denied error at
// first use, never a panic, and sends nothing.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	a := build(t, sprites.Config{})
	require.Equal(t, paddock.ProviderSprites, a.Provider())
	caps := a.Capabilities()
	for _, c := range []paddock.Capability{paddock.CapSuspend, paddock.CapNetworkPolicy, paddock.CapAttach, paddock.CapTTY,
		paddock.CapPublicURL, paddock.CapTerminateSession, paddock.CapForceTerminateSession, paddock.CapCreateNew, paddock.CapDestroyOnce} {
		require.True(t, caps.Has(c), c)
	}
	require.False(t, caps.Has(paddock.CapCheckpoint), "checkpoint creation is off by default")
	require.False(t, caps.Has(paddock.CapNamedSpawn))
	require.False(t, caps.Has(paddock.CapExpose))
	_, err := a.Get(ctxFor(t, time.Second), a.BuildHandle("x"))
	requireKind(t, err, paddock.ErrDenied)
	_, err = a.Spawn(ctxFor(t, time.Second), a.BuildHandle("x"), paddock.NewCmd("true"), paddock.SpawnOpts{})
	requireKind(t, err, paddock.ErrDenied)
	_, err = a.Spawn(ctxFor(t, time.Second), a.BuildHandle("x"), paddock.NewCmd("true"), paddock.SpawnOpts{Name: "n"})
	requireKind(t, err, paddock.ErrNotSupported, "named spawn is not offered")
}

// A 256 MiB file goes up and comes back streamed, in bounded memory. Not
// parallel: the heap is the process's.
func TestFilesStreamBothWaysInBoundedMemory(t *testing.T) {
	srv := spritestest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(t.Context(), "box", paddock.CreateOpts{})
	require.NoError(t, err)
	adaptertest.StreamsFiles(t, t.Context(), a, h, "/tmp/big.bin")
}
