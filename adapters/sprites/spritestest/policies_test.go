package spritestest_test

import (
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// The privileges and resources policies are kept as set ({} until then,
// again after delete), their shapes checked: 400 for one Sprites' SDK
// could not have sent.
func TestPrivilegesAndResourcesPolicies(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	for _, tc := range []struct {
		kind, good string
		bad        []string
	}{
		{"privileges", `{"profile":"standard","devices":["/dev/fuse"],"noNewPrivileges":true}`,
			[]string{`{"profile":"root"}`, `{"devices":"/dev/fuse"}`, `{"noNewPrivileges":"yes"}`, `{"other":1}`, `[]`, `{`}},
		{"resources", `{"memory":{"limit_mb":2048,"autoscale":true}}`,
			[]string{`{"memory":{"limit_mb":0}}`, `{"memory":{"autoscale":true}}`, `{"memory":{"limit_mb":1.5}}`, `{"cpu":2}`, `{`}},
	} {
		path := "/v1/sprites/box/policy/" + tc.kind
		status, body, _ := call(t, srv, http.MethodGet, path, "")
		require.Equal(t, http.StatusOK, status)
		require.JSONEq(t, `{}`, body, "none set at first")
		status, body, _ = call(t, srv, http.MethodPost, path, tc.good)
		require.Equal(t, http.StatusNoContent, status, body)
		_, body, _ = call(t, srv, http.MethodGet, path, "")
		require.JSONEq(t, tc.good, body, "kept as set")
		for _, bad := range tc.bad {
			status, _, _ = call(t, srv, http.MethodPost, path, bad)
			require.Equal(t, http.StatusBadRequest, status, bad)
		}
		_, body, _ = call(t, srv, http.MethodGet, path, "")
		require.JSONEq(t, tc.good, body, "a refused policy changes nothing")
		status, _, _ = call(t, srv, http.MethodDelete, path, "")
		require.Equal(t, http.StatusNoContent, status)
		_, body, _ = call(t, srv, http.MethodGet, path, "")
		require.JSONEq(t, `{}`, body, "deleted")
		status, _, _ = call(t, srv, http.MethodGet, "/v1/sprites/absent/policy/"+tc.kind, "")
		require.Equal(t, http.StatusNotFound, status)
	}
	status, _, _ := call(t, srv, http.MethodGet, "/v1/sprites/box/policy/other", "")
	require.Equal(t, http.StatusNotFound, status, "no other policy")
}
