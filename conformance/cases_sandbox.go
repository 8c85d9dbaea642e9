package conformance

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 4. CreateNew never adopts, and after a destroy makes a new incarnation.
// The gate is read when the case runs.
func createNewRefusesAdoption(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	name := s.name()
	if !paddock.Supports(s.a, paddock.CapCreateNew) {
		h, err := paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
		if err == nil {
			s.destroyAtEnd(t, h)
		}
		requireKind(t, err, paddock.ErrNotSupported, "CreateNew without create_new advertised")
		return
	}
	first, err := paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
	require.NoError(t, err)
	s.destroyAtEnd(t, first)
	require.NotEmpty(t, first.InstanceID, "CreateNew carries an instance id")

	_, err = paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
	require.Error(t, err, "a second CreateNew of one name must not adopt")
	require.True(t, errors.Is(err, paddock.ErrAlreadyExists) || errors.Is(err, paddock.ErrInvalid),
		"a duplicate is already_exists or invalid, got %v", err)

	require.NoError(t, s.a.Destroy(ctx, first))
	third, err := paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
	require.NoError(t, err)
	require.NotEqual(t, first.InstanceID, third.InstanceID, "a new incarnation has a new instance id")
	require.NoError(t, s.a.Destroy(ctx, third))
}

// 5. Create twice adopts; Get answers the sandbox's name and a status.
func createAdopts(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	name := s.name()
	first, err := s.a.Create(ctx, name, paddock.CreateOpts{})
	require.NoError(t, err)
	s.destroyAtEnd(t, first)
	second, err := s.a.Create(ctx, name, paddock.CreateOpts{})
	require.NoError(t, err, "Create of an existing name adopts it")
	require.Equal(t, first.Name, second.Name)
	info, err := s.a.Get(ctx, first)
	require.NoError(t, err)
	require.Equal(t, name, info.Name, "Get reports the sandbox's name")
	requireStatus(t, info.Status)
}

func requireStatus(t testing.TB, st paddock.Status) {
	t.Helper()
	require.Contains(t, []paddock.Status{paddock.StatusRunning, paddock.StatusSuspended, paddock.StatusUnknown}, st)
}

// 6. Get of a name never created is exactly not_found.
func getNeverCreated(t testing.TB, s *suite) {
	_, err := s.a.Get(s.ctx(t), s.a.BuildHandle(s.name()))
	requireKind(t, err, paddock.ErrNotFound)
}

// 7. Destroy of an absent sandbox is ok; after Destroy, Get is not_found.
func destroyIsDefinitive(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	require.NoError(t, s.a.Destroy(ctx, s.a.BuildHandle(s.name())), "Destroy tolerates absence")
	h := s.fresh(t)
	require.NoError(t, s.a.Destroy(ctx, h))
	_, err := s.a.Get(ctx, h)
	requireKind(t, err, paddock.ErrNotFound, "Get after Destroy")
}

// 8. ListAllNames contains a fresh sandbox.
func listAllNames(t testing.TB, s *suite) {
	h := s.fresh(t)
	names, err := s.a.ListAllNames(s.ctx(t))
	require.NoError(t, err)
	require.Contains(t, names, h.Name)
}

// 9. Suspend and Resume succeed, and Get works on the resumed handle.
func suspendResume(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	require.NoError(t, s.a.Suspend(ctx, h))
	h2, err := s.a.Resume(ctx, h)
	require.NoError(t, err)
	info, err := s.a.Get(ctx, h2)
	require.NoError(t, err)
	requireStatus(t, info.Status)
}

// 1. BuildHandle has the adapter's provider and the name, and no instance id.
func buildHandleIsPure(t testing.TB, s *suite) {
	name := s.name()
	h := s.a.BuildHandle(name)
	require.Equal(t, s.a.Provider(), h.Provider)
	require.Equal(t, name, h.Name)
	require.Empty(t, h.InstanceID)
	require.Equal(t, h, s.a.BuildHandle(name), "BuildHandle is pure")
}

// 2. The capabilities are a subset of the closed set.
func capabilitiesAreKnown(t testing.TB, s *suite) {
	require.NoError(t, s.a.Capabilities().Validate())
}

// 3. A URL only with public_url, and then an http(s) one; ErrNoPublicURL
// only without it; any other error passes.
func publicURLAgrees(t testing.TB, s *suite) {
	h := s.fresh(t)
	url, err := paddock.PublicURL(s.ctx(t), s.a, h)
	advertised := paddock.Supports(s.a, paddock.CapPublicURL)
	switch {
	case err == nil:
		require.True(t, advertised, "PublicURL returned %q without advertising public_url", url)
		require.True(t, strings.HasPrefix(url, "http"), "a public URL starts with http: %q", url)
	case errors.Is(err, paddock.ErrNoPublicURL):
		require.False(t, advertised, "PublicURL is unsupported although public_url is advertised")
	}
}

// 25. DestroyOnce succeeds only on confirmed absence: a sandbox is gone
// after it, and an absent one is confirmed absent. Bad options are invalid
// before anything is touched. The gate is read when the case runs.
func destroyOnceConfirmsAbsence(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	err := paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(0)})
	requireKind(t, err, paddock.ErrInvalid, "a zero timeout is invalid, whatever the adapter offers")
	if !paddock.Supports(s.a, paddock.CapDestroyOnce) {
		requireKind(t, paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{}), paddock.ErrNotSupported,
			"DestroyOnce without destroy_once advertised")
		_, err := s.a.Get(ctx, h)
		require.NoError(t, err, "and the sandbox is untouched")
		return
	}
	require.NoError(t, paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{}))
	_, err = s.a.Get(ctx, h)
	requireKind(t, err, paddock.ErrNotFound, "gone after DestroyOnce")
	require.NoError(t, paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{}), "an absent sandbox is confirmed absent")
}

// 26. CreateCheckpointOnce makes one checkpoint the listing shows; without
// create_checkpoint_once it is not supported. A bad operation id is invalid
// first either way.
func checkpointOnceIsListed(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := paddock.CreateCheckpointOnce(ctx, s.a, h, paddock.CheckpointOnceOpts{OperationID: "not valid"})
	requireKind(t, err, paddock.ErrInvalid, "a bad operation id is invalid, whatever the adapter offers")
	// A fresh operation id: hosts never reuse one.
	opts := paddock.CheckpointOnceOpts{OperationID: "conformance-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	if !paddock.Supports(s.a, paddock.CapCreateCheckpointOnce) {
		_, err := paddock.CreateCheckpointOnce(ctx, s.a, h, opts)
		requireKind(t, err, paddock.ErrNotSupported, "CreateCheckpointOnce without create_checkpoint_once advertised")
		return
	}
	id, err := paddock.CreateCheckpointOnce(ctx, s.a, h, opts)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	cps, err := paddock.ListCheckpoints(ctx, s.a, h)
	require.NoError(t, err)
	var comment string
	for _, c := range cps {
		if c.ID == id {
			comment = c.Comment
		}
	}
	require.Equal(t, paddock.CheckpointComment(opts.OperationID), comment, "the checkpoint is listed with its operation's comment")
}

// 19. An empty allow list (deny all) and a one-domain list are accepted.
func policyAccepted(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, s.a, h, paddock.NetworkPolicy{Allow: []string{}}))
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, s.a, h, paddock.NetworkPolicy{Allow: []string{"api.example.com"}}))
	if p := s.cfg.Egress; p != nil {
		fetch := func(url string) (string, int) {
			res, err := s.a.Exec(s.ctx(t), h, p.Fetch(url), paddock.ExecOpts{StderrToStdout: true})
			require.NoError(t, err, url)
			return string(res.Stdout), res.ExitCode
		}
		require.NoError(t, paddock.ApplyNetworkPolicy(ctx, s.a, h, paddock.NetworkPolicy{Allow: []string{p.Allow}}))
		out, code := fetch(p.Allowed)
		require.Equal(t, 0, code, "the allowed URL is reached: %s", out)
		require.Contains(t, out, p.Body)
		out, code = fetch(p.Denied)
		require.NotEqual(t, 0, code, "the denied URL is not: %s", out)
		require.NoError(t, paddock.ApplyNetworkPolicy(ctx, s.a, h, paddock.NetworkPolicy{Allow: []string{}}))
		out, code = fetch(p.Allowed)
		require.NotEqual(t, 0, code, "an empty list denies everything: %s", out)
	}
}

// 19 refused. Without network_policy a policy is refused, never silently
// dropped.
func policyRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	err := paddock.ApplyNetworkPolicy(s.ctx(t), s.a, h, paddock.NetworkPolicy{Allow: []string{}})
	requireKind(t, err, paddock.ErrNotSupported)
}

// 20. With checkpoint, a checkpoint is created, listed and restored.
func checkpointWorks(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	id, err := paddock.CreateCheckpoint(ctx, s.a, h, paddock.CheckpointOpts{Comment: "conformance"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	cps, err := paddock.ListCheckpoints(ctx, s.a, h)
	require.NoError(t, err)
	ids := make([]string, len(cps))
	for i, c := range cps {
		ids[i] = c.ID
	}
	require.Contains(t, ids, id, "the checkpoint is listed")
	require.NoError(t, paddock.RestoreCheckpoint(ctx, s.a, h, id))
}

// 20 refused. Without checkpoint every checkpoint operation is not
// supported.
func checkpointRefused(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := paddock.CreateCheckpoint(ctx, s.a, h, paddock.CheckpointOpts{})
	requireKind(t, err, paddock.ErrNotSupported, "CreateCheckpoint")
	requireKind(t, paddock.RestoreCheckpoint(ctx, s.a, h, "cp-1"), paddock.ErrNotSupported, "RestoreCheckpoint")
	_, err = paddock.ListCheckpoints(ctx, s.a, h)
	requireKind(t, err, paddock.ErrNotSupported, "ListCheckpoints")
}

// previewPort is the port the expose case exposes.
const previewPort = 8080

// 23. Expose returns an http(s) URL without the token in it; where a probe
// is configured, the token works until it is revoked.
func exposeRevoke(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	p, err := paddock.Expose(ctx, s.a, h, previewPort, paddock.ExposeOpts{})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(p.URL, "http"), "a preview URL starts with http: %q", p.URL)
	require.False(t, p.Token.IsZero(), "a preview carries a token")
	require.NotContains(t, p.URL, p.Token.Reveal(), "the token is never part of the URL")
	require.Equal(t, previewPort, p.Port)
	require.False(t, p.ExpiresAt.IsZero(), "a preview expires")

	if s.cfg.PreviewProbe != nil {
		ok, err := s.cfg.PreviewProbe(ctx, p)
		require.NoError(t, err)
		require.True(t, ok, "a fresh preview token works")
	}
	require.NoError(t, paddock.Revoke(ctx, s.a, h, p))
	if s.cfg.PreviewProbe != nil {
		ok, err := s.cfg.PreviewProbe(ctx, p)
		require.NoError(t, err)
		require.False(t, ok, "a revoked preview token stops working")
	}
}

// 23 refused. Without expose the facade refuses.
func exposeRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	_, err := paddock.Expose(s.ctx(t), s.a, h, previewPort, paddock.ExposeOpts{})
	requireKind(t, err, paddock.ErrNotSupported)
}

// ProbePreviewHTTP is a PreviewProbe for adapters whose previews are
// served over HTTP: it requests the preview's URL with its token and
// reports whether the token was accepted (any answer but 401; where
// nothing listens on the port, the proxy answers 502).
func ProbePreviewHTTP(ctx context.Context, p paddock.Preview) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return false, err
	}
	p.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	_ = res.Body.Close()
	return res.StatusCode != http.StatusUnauthorized, nil
}
