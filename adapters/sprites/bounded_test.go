package sprites_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// outcome is an expected answer of a bounded operation: nil kind is
// success; otherwise the taxonomy kind, the exact detail and the HTTP
// status the error carries.
type outcome struct {
	kind   error
	detail string
	status int
}

var (
	ok                 = outcome{}
	alreadyExists      = outcome{kind: paddock.ErrAlreadyExists}
	createUnconfirmed  = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailCreateUnconfirmed}
	createTimeout      = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailCreateTimeout}
	createTransport    = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailCreateTransportFailed}
	deleteUnconfirmed  = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailDeleteUnconfirmed}
	deleteTimeout      = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailDeleteTimeout}
	deleteTransport    = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailDeleteTransportFailed}
	cpUnconfirmed      = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailCheckpointUnconfirmed}
	cpTimeout          = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailCheckpointTimeout}
	cpTransport        = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailCheckpointTransportFailed}
	termUnconfirmed    = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailTerminationUnconfirmed}
	termTimeout        = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailTerminationTimeout}
	termTransport      = outcome{kind: paddock.ErrUnavailable, detail: paddock.DetailTerminationTransportFailed}
	denied             = outcome{kind: paddock.ErrDenied, status: 401}
	rateLimited        = outcome{kind: paddock.ErrRateLimited}
	unavailable503     = outcome{kind: paddock.ErrUnavailable, status: 503}
	unavailable500     = outcome{kind: paddock.ErrUnavailable, status: 500}
	notSupported       = outcome{kind: paddock.ErrNotSupported}
	noToken            = outcome{kind: paddock.ErrDenied, detail: "sprites: no token configured"}
	invalidCreate      = outcome{kind: paddock.ErrInvalid, detail: paddock.DetailCreateTimeout}
	invalidDelete      = outcome{kind: paddock.ErrInvalid, detail: paddock.DetailDeleteTimeout}
	invalidCpTimeout   = outcome{kind: paddock.ErrInvalid, detail: paddock.DetailCheckpointTimeout}
	invalidCpOperation = outcome{kind: paddock.ErrInvalid, detail: paddock.DetailCheckpointOperationID}
	invalidName        = outcome{kind: paddock.ErrInvalid, detail: paddock.DetailSandboxName}
	invalidTermination = outcome{kind: paddock.ErrInvalid, detail: paddock.DetailTerminationRequest}
)

func invalidStatus(status int) outcome { return outcome{kind: paddock.ErrInvalid, status: status} }

// requireOutcome asserts err matches want exactly, and records it for the
// token scan. A bounded operation's error never carries provider prose.
func requireOutcome(t testing.TB, want outcome, err error) {
	t.Helper()
	captured.Err(err)
	if want.kind == nil {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	require.True(t, errors.Is(err, want.kind), "want kind %v, got %T: %v", want.kind, err, err)
	require.NotContains(t, err.Error(), spritestest.PrivateDetail, "provider prose leaked")
	detail, status := "", 0
	var (
		u  *paddock.UnavailableError
		iv *paddock.InvalidError
		d  *paddock.DeniedError
		rl *paddock.RateLimitedError
	)
	switch {
	case errors.As(err, &u):
		detail, status = u.Detail, u.Status
	case errors.As(err, &iv):
		detail, status = iv.Detail, iv.Status
	case errors.As(err, &d):
		detail, status = d.Detail, d.Status
	case errors.As(err, &rl):
		require.Nil(t, rl.RetryAfter, "a bounded operation drops the body, and with it the retry hint")
	}
	require.Equal(t, want.detail, detail, "detail of %v", err)
	require.Equal(t, want.status, status, "status of %v", err)
}

func ms(n int) *time.Duration { return paddock.Duration(time.Duration(n) * time.Millisecond) }

// requireRequests asserts the exact routes the server saw, in order.
func requireRequests(t testing.TB, srv *spritestest.Server, routes ...string) {
	t.Helper()
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.Route)
	}
	require.Equal(t, routes, got, "the requests sent")
}

// oversize is a body one byte over a 64 KiB budget.
var oversize = `{"name":"box","id":"` + strings.Repeat("x", 65537-len(`{"name":"box","id":""}`)) + `"}`

// truncated declares more bytes than it sends, then closes.
func truncated(status int, body string) spritestest.Fault {
	return spritestest.Fault{Status: status, Body: body, DeclaredLength: len(body) + 1000}
}

// overDeclared declares 100000 bytes, sends 70000, then stalls until the
// client leaves.
func overDeclared(status int) spritestest.Fault {
	return spritestest.Fault{Status: status, Body: strings.Repeat("a", 70000), DeclaredLength: 100000, Stall: true}
}

func reset() spritestest.Fault { return spritestest.Fault{Reset: true} }

func TestCreateNewValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		sprite  string
		timeout *time.Duration
		want    outcome
	}{
		{"explicit zero timeout", "box", ms(0), invalidCreate},
		{"negative timeout", "box", ms(-1), invalidCreate},
		{"timeout over 120000 ms", "box", ms(120001), invalidCreate},
		{"timeout not whole milliseconds", "box", paddock.Duration(1500 * time.Microsecond), invalidCreate},
		{"empty name", "", nil, invalidName},
		{"name with a slash", "a/b", nil, invalidName},
		{"name too long", strings.Repeat("n", 257), nil, invalidName},
		{"timeout checked before the name", "", ms(0), invalidCreate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			_, err := newAdapter(t, srv).CreateNew(ctxFor(t, 5*time.Second), c.sprite, paddock.CreateNewOpts{Timeout: c.timeout})
			requireOutcome(t, c.want, err)
			requireRequests(t, srv)
		})
	}
	t.Run("no token, after validation", func(t *testing.T) {
		srv := newServer(t)
		a := build(t, sprites.Config{BaseURL: srv.URL()})
		_, err := a.CreateNew(ctxFor(t, 5*time.Second), "box", paddock.CreateNewOpts{Timeout: ms(0)})
		requireOutcome(t, invalidCreate, err)
		_, err = a.CreateNew(ctxFor(t, 5*time.Second), "box", paddock.CreateNewOpts{})
		requireOutcome(t, noToken, err)
		requireRequests(t, srv)
	})
	t.Run("bounds are accepted", func(t *testing.T) {
		srv := newServer(t)
		a := newAdapter(t, srv)
		for i, timeout := range []*time.Duration{nil, ms(120000), ms(5000)} {
			h, err := a.CreateNew(ctxFor(t, 10*time.Second), "box"+string(rune('a'+i)), paddock.CreateNewOpts{Timeout: timeout})
			requireOutcome(t, ok, err)
			require.True(t, strings.HasPrefix(h.InstanceID, "sprite-"), h.InstanceID)
		}
	})
}

func TestCreateNewAnswers(t *testing.T) {
	t.Parallel()
	const post = "POST /v1/sprites"
	body := func(v string) spritestest.Fault { return spritestest.Body(201, v) }
	cases := []struct {
		name    string
		exists  bool
		fault   *spritestest.Fault
		timeout *time.Duration
		want    outcome
		gone    bool // the client must have closed the connection
	}{
		{"201 with the sprite", false, nil, nil, ok, false},
		{"200 with the sprite", false, &spritestest.Fault{Status: 200, Body: `{"name":"box","id":"sprite-1"}`}, nil, ok, false},
		{"409 is already_exists, never adoption", true, nil, nil, alreadyExists, false},
		{"400", false, ptr(spritestest.Status(400)), nil, invalidStatus(400), false},
		{"400 conflict stays invalid", false, ptr(spritestest.Body(400, `{"errors":["A sprite with this name already exists"]}`)), nil, invalidStatus(400), false},
		{"401", false, ptr(spritestest.Status(401)), nil, denied, false},
		{"429 loses its hint with the body", false, ptr(spritestest.RateLimited(7)), nil, rateLimited, false},
		{"503", false, ptr(spritestest.Status(503)), nil, unavailable503, false},
		{"302 is not followed", false, ptr(spritestest.Redirect()), nil, invalidStatus(302), false},
		{"2xx without a name", false, ptr(body(`{"id":"sprite-1"}`)), nil, createUnconfirmed, false},
		{"2xx with another name", false, ptr(body(`{"name":"other","id":"sprite-1"}`)), nil, createUnconfirmed, false},
		{"2xx without an id", false, ptr(body(`{"name":"box"}`)), nil, createUnconfirmed, false},
		{"2xx with an empty id", false, ptr(body(`{"name":"box","id":""}`)), nil, createUnconfirmed, false},
		{"2xx with a numeric id", false, ptr(body(`{"name":"box","id":123}`)), nil, createUnconfirmed, false},
		{"2xx with a 257-byte id", false, ptr(body(`{"name":"box","id":"` + strings.Repeat("i", 257) + `"}`)), nil, createUnconfirmed, false},
		{"2xx with a 256-byte id", false, ptr(body(`{"name":"box","id":"` + strings.Repeat("i", 256) + `"}`)), nil, ok, false},
		{"2xx not JSON", false, ptr(body(`not json`)), nil, createUnconfirmed, false},
		{"2xx array", false, ptr(body(`[]`)), nil, createUnconfirmed, false},
		{"2xx null", false, ptr(body(`null`)), nil, createUnconfirmed, false},
		{"2xx of 65537 bytes", false, ptr(body(oversize)), nil, createUnconfirmed, false},
		{"truncated body", false, ptr(truncated(201, `{"name":"box","id":"sprite-1"}`)), nil, createUnconfirmed, false},
		{"declared 100000, sent 70000, stalled", false, ptr(overDeclared(201)), ms(5000), createUnconfirmed, true},
		{"stalled past the deadline", false, ptr(spritestest.Stall()), ms(3000), createTimeout, true}, // seconds: a loaded machine is slow to send
		{"connection reset", false, ptr(reset()), nil, createTransport, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			a := newAdapter(t, srv)
			if c.exists {
				_, err := a.Create(ctxFor(t, 5*time.Second), "box", paddock.CreateOpts{})
				require.NoError(t, err)
			}
			before := len(srv.Requests())
			if c.fault != nil {
				srv.Fail(post, *c.fault)
			}
			start := time.Now()
			h, err := a.CreateNew(ctxFor(t, 10*time.Minute), "box", paddock.CreateNewOpts{Timeout: c.timeout})
			requireOutcome(t, c.want, err)
			if c.timeout != nil { // the server stalls for good: only the deadline ends the call
				require.Less(t, time.Since(start), 5*time.Minute, "the deadline holds")
			}
			reqs := srv.Requests()[before:]
			require.Len(t, reqs, 1, "exactly one request: no retry, no redirect, no probe")
			require.Equal(t, post, reqs[0].Route)
			if c.want.kind == nil {
				require.Equal(t, "box", h.Name)
				require.NotEmpty(t, h.InstanceID)
			}
			if c.gone {
				require.Eventually(t, func() bool { return srv.Requests()[before].ClientGone }, time.Minute, 10*time.Millisecond,
					"the client closed the connection")
			}
		})
	}
}

func TestCreateNewRequestBody(t *testing.T) {
	t.Parallel()
	no := false
	cases := []struct {
		name string
		edit func(*sprites.Config)
		wait bool
		want string
	}{
		{"public URLs (default)", func(*sprites.Config) {}, false, `{"name":"box","url_settings":{"auth":"public"},"wait_for_capacity":false}`},
		{"organisation-only URLs", func(c *sprites.Config) { c.PublicURLs = &no }, false, `{"name":"box","url_settings":{"auth":"sprite"},"wait_for_capacity":false}`},
		{"wait for capacity", func(*sprites.Config) {}, true, `{"name":"box","url_settings":{"auth":"public"},"wait_for_capacity":true}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			_, err := newAdapter(t, srv, c.edit).CreateNew(ctxFor(t, 5*time.Second), "box", paddock.CreateNewOpts{WaitForCapacity: c.wait})
			require.NoError(t, err)
			reqs := srv.Requests()
			require.Len(t, reqs, 1, "no follow-up URL write")
			require.JSONEq(t, c.want, reqs[0].Body)
		})
	}
}

func TestDestroyOnceValidation(t *testing.T) {
	t.Parallel()
	for name, timeout := range map[string]*time.Duration{
		"explicit zero": ms(0), "negative": ms(-1), "over 120000 ms": ms(120001),
		"not whole milliseconds": paddock.Duration(time.Millisecond + time.Microsecond),
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			err := newAdapter(t, srv).DestroyOnce(ctxFor(t, 5*time.Second), paddock.Handle{Provider: paddock.ProviderSprites, Name: "box"},
				paddock.DestroyOnceOpts{Timeout: timeout})
			requireOutcome(t, invalidDelete, err)
			requireRequests(t, srv)
		})
	}
	t.Run("no token", func(t *testing.T) {
		srv := newServer(t)
		err := build(t, sprites.Config{BaseURL: srv.URL()}).DestroyOnce(ctxFor(t, 5*time.Second),
			paddock.Handle{Provider: paddock.ProviderSprites, Name: "box"}, paddock.DestroyOnceOpts{})
		requireOutcome(t, noToken, err)
		requireRequests(t, srv)
	})
}

func TestDestroyOnceAnswers(t *testing.T) {
	t.Parallel()
	const del, get = "DELETE /v1/sprites/{name}", "GET /v1/sprites/{name}"
	cases := []struct {
		name      string
		exists    bool
		deleteF   *spritestest.Fault
		getF      *spritestest.Fault
		timeout   *time.Duration
		want      outcome
		requests  []string
		stillHere bool
	}{
		{"204 then 404 confirms", true, nil, nil, nil, ok, []string{del, get}, false},
		{"404 is done at once", false, nil, nil, nil, ok, []string{del}, false},
		{"200 then 404", true, ptr(spritestest.Status(200)), ptr(spritestest.Status(404)), nil, ok, []string{del, get}, true},
		{"202 then 404", true, ptr(spritestest.Status(202)), ptr(spritestest.Status(404)), nil, ok, []string{del, get}, true},
		{"204 while still there: GET 200", true, ptr(spritestest.Status(204)), nil, nil, deleteUnconfirmed, []string{del, get}, true},
		{"204 then GET 503", true, ptr(spritestest.Status(204)), ptr(spritestest.Status(503)), nil, deleteUnconfirmed, []string{del, get}, true},
		{"204 then GET 302", true, ptr(spritestest.Status(204)), ptr(spritestest.Redirect()), nil, deleteUnconfirmed, []string{del, get}, true},
		{"204 then GET 500 for absent", true, nil, ptr(spritestest.Body(500, `{"error":"failed to retrieve sprite"}`)), nil, deleteUnconfirmed, []string{del, get}, false},
		{"302 is not normalised", true, ptr(spritestest.Redirect()), nil, nil, deleteUnconfirmed, []string{del}, true},
		{"401 is not normalised", true, ptr(spritestest.Status(401)), nil, nil, deleteUnconfirmed, []string{del}, true},
		{"429 is not normalised", true, ptr(spritestest.RateLimited(3)), nil, nil, deleteUnconfirmed, []string{del}, true},
		{"503 is not normalised", true, ptr(spritestest.Status(503)), nil, nil, deleteUnconfirmed, []string{del}, true},
		{"500 for absent is not absence", false, ptr(spritestest.Body(500, `{"error":"failed to delete sprite"}`)), nil, nil, deleteUnconfirmed, []string{del}, false},
		{"oversized GET answer", true, ptr(spritestest.Body(204, "")), ptr(spritestest.Body(404, strings.Repeat("x", 65537))), nil, deleteUnconfirmed, []string{del, get}, true},
		{"DELETE stalled", true, ptr(spritestest.Stall()), nil, ms(3000), deleteTimeout, []string{del}, true}, // seconds: a loaded machine is slow to send
		{"GET stalled", true, nil, ptr(spritestest.Stall()), ms(5000), deleteTimeout, []string{del, get}, false},
		{"DELETE reset", true, ptr(reset()), nil, nil, deleteTransport, []string{del}, true},
		{"GET reset", true, nil, ptr(reset()), nil, deleteTransport, []string{del, get}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			a := newAdapter(t, srv)
			if c.exists {
				srv.AddSprite("box")
			}
			if c.deleteF != nil {
				srv.Fail(del, *c.deleteF)
			}
			if c.getF != nil {
				srv.Fail(get, *c.getF)
			}
			err := a.DestroyOnce(ctxFor(t, 10*time.Second), a.BuildHandle("box"), paddock.DestroyOnceOpts{Timeout: c.timeout})
			requireOutcome(t, c.want, err)
			requireRequests(t, srv, c.requests...)
			require.Equal(t, c.stillHere, srv.Exists("box"))
		})
	}
}

func TestDestroyOnceEncodesTheName(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddSprite("owned worker")
	a := newAdapter(t, srv)
	require.NoError(t, a.DestroyOnce(ctxFor(t, 5*time.Second), a.BuildHandle("owned worker"), paddock.DestroyOnceOpts{}))
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		require.Equal(t, "/v1/sprites/owned%20worker", r.RawPath)
		require.Equal(t, "/v1/sprites/owned worker", r.Path)
	}
}

// checkpoint stream and listing bodies.
const (
	op          = "op-1"
	comment     = "sandbox-operation:" + op
	goodStream  = `{"type":"info","data":"Creating checkpoint...","time":"t"}` + "\n" + `{"type":"complete","data":"Checkpoint v1 created successfully","time":"t"}` + "\n"
	goodListing = `[{"id":"Current"},{"id":"v1","comment":"` + comment + `"},{"id":"v0"}]`
)

func line(v string) string { return v + "\n" }

func TestCheckpointOnceValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts paddock.CheckpointOnceOpts
		want outcome
	}{
		{"zero timeout", paddock.CheckpointOnceOpts{Timeout: ms(0), OperationID: op}, invalidCpTimeout},
		{"negative timeout", paddock.CheckpointOnceOpts{Timeout: ms(-5), OperationID: op}, invalidCpTimeout},
		{"timeout over 120000 ms", paddock.CheckpointOnceOpts{Timeout: ms(120001), OperationID: op}, invalidCpTimeout},
		{"timeout checked before the id", paddock.CheckpointOnceOpts{Timeout: ms(0), OperationID: ""}, invalidCpTimeout},
		{"empty id", paddock.CheckpointOnceOpts{OperationID: ""}, invalidCpOperation},
		{"id with a space", paddock.CheckpointOnceOpts{OperationID: "op 1"}, invalidCpOperation},
		{"id with a newline", paddock.CheckpointOnceOpts{OperationID: "op\n1"}, invalidCpOperation},
		{"id of 129 characters", paddock.CheckpointOnceOpts{OperationID: strings.Repeat("o", 129)}, invalidCpOperation},
		{"id with a slash", paddock.CheckpointOnceOpts{OperationID: "a/b"}, invalidCpOperation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.AddSprite("box")
			for _, edit := range []func(*sprites.Config){withCheckpoints, func(*sprites.Config) {}} {
				a := newAdapter(t, srv, edit)
				_, err := a.CreateCheckpointOnce(ctxFor(t, 5*time.Second), a.BuildHandle("box"), c.opts)
				requireOutcome(t, c.want, err)
			}
			requireRequests(t, srv)
		})
	}
	t.Run("setting off is not_supported, after validation", func(t *testing.T) {
		srv := newServer(t)
		srv.AddSprite("box")
		a := newAdapter(t, srv)
		_, err := a.CreateCheckpointOnce(ctxFor(t, 5*time.Second), a.BuildHandle("box"), paddock.CheckpointOnceOpts{OperationID: op})
		requireOutcome(t, notSupported, err)
		requireRequests(t, srv)
	})
	t.Run("no token", func(t *testing.T) {
		srv := newServer(t)
		a := build(t, sprites.Config{BaseURL: srv.URL(), CheckpointCreation: true})
		_, err := a.CreateCheckpointOnce(ctxFor(t, 5*time.Second), a.BuildHandle("box"), paddock.CheckpointOnceOpts{OperationID: op})
		requireOutcome(t, noToken, err)
		requireRequests(t, srv)
	})
}

func TestCheckpointOnceAnswers(t *testing.T) {
	t.Parallel()
	const post, list = "POST /v1/sprites/{name}/checkpoint", "GET /v1/sprites/{name}/checkpoints"
	stream := func(body string) *spritestest.Fault { return ptr(spritestest.Body(200, body)) }
	listing := func(body string) *spritestest.Fault { return ptr(spritestest.Body(200, body)) }
	padded := `[{"id":"v1","comment":"` + comment + `"},{"id":"pad","comment":"` + strings.Repeat("p", 65536-len(goodStream)-60) + `"}]`
	cases := []struct {
		name     string
		postF    *spritestest.Fault
		listF    *spritestest.Fault
		timeout  *time.Duration
		want     outcome
		wantID   string
		requests []string
	}{
		{"the real server", nil, nil, nil, ok, "v1", []string{post, list}},
		{"a scripted success", stream(goodStream), listing(goodListing), nil, ok, "v1", []string{post, list}},
		{"an unrelated uncommented entry is fine", stream(goodStream), listing(`[{"id":"v7"},{"id":"v8","comment":"` + comment + `"}]`), nil, ok, "v8", []string{post, list}},
		{"complete only", stream(line(`{"type":"complete","data":"done"}`)), listing(goodListing), nil, ok, "v1", []string{post, list}},
		// statuses of the POST
		{"POST 201", ptr(spritestest.Body(201, goodStream)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 202", ptr(spritestest.Body(202, goodStream)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 204", ptr(spritestest.Status(204)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 302", ptr(spritestest.Redirect()), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 400", ptr(spritestest.Status(400)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 401", ptr(spritestest.Status(401)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 404", ptr(spritestest.Status(404)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 429", ptr(spritestest.RateLimited(2)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 500", ptr(spritestest.Status(500)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"POST 503", ptr(spritestest.Status(503)), nil, nil, cpUnconfirmed, "", []string{post}},
		// stream bodies with 200
		{"empty stream", stream(""), nil, nil, cpUnconfirmed, "", []string{post}},
		{"not JSON", stream("not-json\n"), nil, nil, cpUnconfirmed, "", []string{post}},
		{"an array line", stream("[]\n"), nil, nil, cpUnconfirmed, "", []string{post}},
		{"an empty object", stream("{}\n"), nil, nil, cpUnconfirmed, "", []string{post}},
		{"info only", stream(line(`{"type":"info","data":"Creating checkpoint..."}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"an error event", stream(line(`{"type":"info","data":"x"}`) + line(`{"type":"error","error":"disk full"}`) + line(`{"type":"complete","data":"y"}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"complete with numeric data", stream(line(`{"type":"complete","data":1}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"complete with an error key", stream(line(`{"type":"complete","data":"y","error":"late"}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"info with error null", stream(line(`{"type":"info","data":"x","error":null}`) + line(`{"type":"complete","data":"y"}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"two completes", stream(line(`{"type":"complete","data":"y"}`) + line(`{"type":"complete","data":"y"}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"complete then info", stream(line(`{"type":"complete","data":"y"}`) + line(`{"type":"info","data":"x"}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"truncated complete", ptr(truncated(200, goodStream)), nil, nil, cpUnconfirmed, "", []string{post}},
		{"stream of 65537 bytes", stream(line(`{"type":"info","data":"`+strings.Repeat("d", 65537)+`"}`) + line(`{"type":"complete","data":"y"}`)), nil, nil, cpUnconfirmed, "", []string{post}},
		// statuses of the listing
		{"listing 202", stream(goodStream), ptr(spritestest.Body(202, goodListing)), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing 302", stream(goodStream), ptr(spritestest.Redirect()), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing 404", stream(goodStream), ptr(spritestest.Status(404)), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing 429", stream(goodStream), ptr(spritestest.RateLimited(1)), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing 503", stream(goodStream), ptr(spritestest.Status(503)), nil, cpUnconfirmed, "", []string{post, list}},
		// listing bodies with 200
		{"listing not JSON", stream(goodStream), listing("not-json"), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing an object", stream(goodStream), listing("{}"), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing empty", stream(goodStream), listing("[]"), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing [null]", stream(goodStream), listing("[null]"), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing [4]", stream(goodStream), listing("[4]"), nil, cpUnconfirmed, "", []string{post, list}},
		{"listing null id", stream(goodStream), listing(`[{"id":null}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"another operation only", stream(goodStream), listing(`[{"id":"v1","comment":"sandbox-operation:op-2"}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"Current carries the comment", stream(goodStream), listing(`[{"id":"Current","comment":"` + comment + `"}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"two matches", stream(goodStream), listing(`[{"id":"v1","comment":"` + comment + `"},{"id":"v2","comment":"` + comment + `"}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"an empty id", stream(goodStream), listing(`[{"id":"","comment":"` + comment + `"}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"a 257-byte id", stream(goodStream), listing(`[{"id":"` + strings.Repeat("i", 257) + `","comment":"` + comment + `"}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"a match and a numeric comment", stream(goodStream), listing(`[{"id":"v1","comment":"` + comment + `"},{"id":"v2","comment":5}]`), nil, cpUnconfirmed, "", []string{post, list}},
		{"budget shared by both answers", stream(goodStream), listing(padded), nil, cpUnconfirmed, "", []string{post, list}},
		{"truncated listing", stream(goodStream), ptr(truncated(200, goodListing)), nil, cpUnconfirmed, "", []string{post, list}},
		// transport
		// (budgets of seconds: on a loaded machine the request itself can
		// take most of a second to reach the server)
		{"POST stalled", ptr(spritestest.Stall()), nil, ms(3000), cpTimeout, "", []string{post}},
		{"listing stalled: it has only the time left", stream(goodStream), ptr(spritestest.Stall()), ms(5000), cpTimeout, "", []string{post, list}},
		{"POST reset", ptr(reset()), nil, nil, cpTransport, "", []string{post}},
		{"listing reset", stream(goodStream), ptr(reset()), nil, cpTransport, "", []string{post, list}},
		{"POST declared 100000, sent 70000", ptr(overDeclared(200)), nil, ms(5000), cpUnconfirmed, "", []string{post}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.AddSprite("box")
			a := newAdapter(t, srv, withCheckpoints)
			if c.postF != nil {
				srv.Fail(post, *c.postF)
			}
			if c.listF != nil {
				srv.Fail(list, *c.listF)
			}
			id, err := a.CreateCheckpointOnce(ctxFor(t, 10*time.Second), a.BuildHandle("box"), paddock.CheckpointOnceOpts{OperationID: op, Timeout: c.timeout})
			requireOutcome(t, c.want, err)
			require.Equal(t, c.wantID, id)
			requireRequests(t, srv, c.requests...)
			reqs := srv.Requests()
			require.JSONEq(t, `{"comment":"`+comment+`"}`, reqs[0].Body)
		})
	}
}

func TestCheckpointOnceCannotOutliveItsDeadline(t *testing.T) {
	t.Parallel()
	// The caller goes away at once; the request still ends at its own
	// deadline (the client closes the connection), not later.
	srv := newServer(t)
	srv.AddSprite("box")
	a := newAdapter(t, srv, withCheckpoints)
	srv.Fail("POST /v1/sprites/{name}/checkpoint", spritestest.Stall())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// A deadline long enough that the caller surely leaves first, even
		// on a loaded machine.
		_, err := a.CreateCheckpointOnce(ctx, a.BuildHandle("box"), paddock.CheckpointOnceOpts{OperationID: op, Timeout: ms(2000)})
		done <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, time.Minute, 5*time.Millisecond)
	start := time.Now()
	cancel()
	requireOutcome(t, cpUnconfirmed, <-done)
	// The ordinary client's timeout (30 s) would be later: the bounds sit
	// between, loose enough for a loaded machine.
	require.Eventually(t, func() bool { return srv.Requests()[0].ClientGone }, time.Minute, 10*time.Millisecond,
		"the abandoned request is closed by its deadline")
	require.Less(t, time.Since(start), 20*time.Second, "by the deadline (2 s), not at the client's timeout (30 s)")
}

func TestTerminateValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		session string
		opts    paddock.TerminateOpts
	}{
		{"empty id", "", paddock.TerminateOpts{}},
		{"path traversal", "../other", paddock.TerminateOpts{}},
		{"a slash", "a/b", paddock.TerminateOpts{}},
		{"a query", "a?x=1", paddock.TerminateOpts{}},
		{"257 characters", strings.Repeat("s", 257), paddock.TerminateOpts{}},
		{"zero timeout", "20", paddock.TerminateOpts{Timeout: ms(0)}},
		{"timeout over 30000 ms", "20", paddock.TerminateOpts{Timeout: ms(30001)}},
		{"timeout not whole milliseconds", "20", paddock.TerminateOpts{Timeout: paddock.Duration(1500 * time.Microsecond)}},
		{"unknown mode", "20", paddock.TerminateOpts{Mode: "gentle"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			a := newAdapter(t, srv)
			err := a.TerminateSession(ctxFor(t, 5*time.Second), a.BuildHandle("box"), c.session, c.opts)
			requireOutcome(t, invalidTermination, err)
			err = paddock.TerminateSession(ctxFor(t, 5*time.Second), a, a.BuildHandle("box"), c.session, c.opts)
			requireOutcome(t, invalidTermination, err)
			requireRequests(t, srv)
		})
	}
	t.Run("no token", func(t *testing.T) {
		srv := newServer(t)
		a := build(t, sprites.Config{BaseURL: srv.URL()})
		err := a.TerminateSession(ctxFor(t, 5*time.Second), a.BuildHandle("box"), "20", paddock.TerminateOpts{})
		requireOutcome(t, noToken, err)
		requireRequests(t, srv)
	})
}

func TestTerminateAnswers(t *testing.T) {
	t.Parallel()
	const kill = "POST /v1/sprites/{name}/exec/{session}/kill"
	ev := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return string(b) + "\n"
	}
	sigterm := ev(map[string]any{"type": "signal", "message": "m", "signal": "SIGTERM", "pid": 20})
	sigkill := ev(map[string]any{"type": "signal", "message": "m", "signal": "SIGKILL", "pid": 20})
	exited := ev(map[string]any{"type": "exited", "message": "m"})
	complete := func(code any) string { return ev(map[string]any{"type": "complete", "exit_code": code}) }
	body := func(b string) *spritestest.Fault { return ptr(spritestest.Body(200, b)) }
	cases := []struct {
		name  string
		force bool
		fault *spritestest.Fault
		want  outcome
	}{
		{"graceful: signal, exited, complete", false, body(sigterm + exited + complete(143)), ok},
		{"graceful: timeout, killed", false, body(sigterm + ev(map[string]any{"type": "timeout", "message": "m"}) + ev(map[string]any{"type": "killed", "message": "m"}) + complete(137)), ok},
		{"force: SIGKILL with a pid", true, body(sigkill + exited + complete(137)), ok},
		{"graceful 404 is done", false, ptr(spritestest.Status(404)), ok},
		{"force 404 is uncertain", true, ptr(spritestest.Status(404)), termUnconfirmed},
		{"empty body", false, body(""), termUnconfirmed},
		{"signal only", false, body(sigterm), termUnconfirmed},
		{"completion only", false, body(complete(0)), termUnconfirmed},
		{"no completion", false, body(sigterm + exited), termUnconfirmed},
		{"not JSON", false, body("not JSON\n"), termUnconfirmed},
		{"an array", false, body("[]\n"), termUnconfirmed},
		{"complete without exit_code", false, body(sigterm + exited + ev(map[string]any{"type": "complete"})), termUnconfirmed},
		{"error then complete", false, body(sigterm + ev(map[string]any{"type": "error", "message": "may not have terminated"}) + exited + complete(143)), termUnconfirmed},
		{"an unknown event", false, body(sigterm + ev(map[string]any{"type": "mystery"}) + exited + complete(143)), termUnconfirmed},
		{"an event after complete", false, body(sigterm + exited + complete(143) + exited), termUnconfirmed},
		{"16385 bytes", false, body(sigterm + exited + ev(map[string]any{"type": "exited", "message": strings.Repeat("m", 16385)}) + complete(143)), termUnconfirmed},
		{"exit code -1", false, body(sigterm + exited + complete(-1)), termUnconfirmed},
		{"exit code 256", false, body(sigterm + exited + complete(256)), termUnconfirmed},
		{"exit code 1.5", false, body(sigterm + exited + complete(1.5)), termUnconfirmed},
		{`exit code "137"`, false, body(sigterm + exited + complete("137")), termUnconfirmed},
		{"force: no signal event", true, body(exited + complete(137)), termUnconfirmed},
		{"force: signal without a name", true, body(ev(map[string]any{"type": "signal", "pid": 20}) + exited + complete(137)), termUnconfirmed},
		{"force: SIGTERM named", true, body(sigterm + exited + complete(143)), termUnconfirmed},
		{"force: no pid", true, body(ev(map[string]any{"type": "signal", "signal": "SIGKILL"}) + exited + complete(137)), termUnconfirmed},
		{"force: pid 0", true, body(ev(map[string]any{"type": "signal", "signal": "SIGKILL", "pid": 0}) + exited + complete(137)), termUnconfirmed},
		{"truncated body", false, ptr(truncated(200, sigterm+exited+complete(143))), termUnconfirmed},
		{"302", false, ptr(spritestest.Redirect()), invalidStatus(302)},
		{"204 is not evidence", false, ptr(spritestest.Status(204)), invalidStatus(204)},
		{"401", false, ptr(spritestest.Status(401)), denied},
		{"429", false, ptr(spritestest.RateLimited(4)), rateLimited},
		{"503", false, ptr(spritestest.Status(503)), unavailable503},
		{"500", false, ptr(spritestest.Status(500)), unavailable500},
		{"410 gone: done (as Sprites' client reads it)", false, ptr(spritestest.Status(410)), ok},
		{"force: 410 gone is unconfirmed, as 404", true, ptr(spritestest.Status(410)), termUnconfirmed},
		{"reset", false, ptr(reset()), termTransport},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.AddSprite("box")
			a := newAdapter(t, srv)
			srv.Fail(kill, *c.fault)
			opts := paddock.TerminateOpts{Timeout: ms(1500)}
			want := "SIGTERM"
			if c.force {
				opts.Mode, want = paddock.TerminateForce, "SIGKILL"
			}
			err := a.TerminateSession(ctxFor(t, 10*time.Second), a.BuildHandle("box"), "20", opts)
			requireOutcome(t, c.want, err)
			requireRequests(t, srv, kill)
			r := srv.Requests()[0]
			require.Equal(t, "/v1/sprites/box/exec/20/kill", r.Path)
			require.Equal(t, "signal="+want+"&timeout=1500ms", r.Query)
		})
	}
	t.Run("stalled past timeout + 5 s", func(t *testing.T) {
		srv := newServer(t)
		srv.AddSprite("box")
		a := newAdapter(t, srv)
		srv.Fail(kill, spritestest.Stall())
		start := time.Now()
		err := a.TerminateSession(ctxFor(t, 10*time.Minute), a.BuildHandle("box"), "20", paddock.TerminateOpts{Timeout: ms(1)})
		took := time.Since(start)
		requireOutcome(t, termTimeout, err)
		require.GreaterOrEqual(t, took, paddock.TerminateTransportAllowance, "the transport allowance is granted")
		require.Less(t, took, 5*time.Minute, "and bounds the call: the server stalls for good")
		requireRequests(t, srv, kill)
		require.Eventually(t, func() bool { return srv.Requests()[0].ClientGone }, time.Minute, 10*time.Millisecond)
	})
}

func ptr[T any](v T) *T { return &v }
