package e2btest_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Template names and tags as E2B's API answers them: an alias's lookup
// (with a tag, the tag must exist; "aliases" is the fixed segment), tags
// assigned to a build (lower-cased, de-duplicated, never a UUID) and
// removed (never "default"), the base template E2B's and not the team's,
// each refusal in the API's words.
func TestTemplateTags(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	sb := create(t, srv, map[string]any{"templateID": "base"})
	status, _, data := call(t, srv, http.MethodPost, "/sandboxes/"+sb+"/snapshots", map[string]string{"name": "app:v1"})
	require.Equal(t, http.StatusCreated, status, string(data))

	status, _, data = call(t, srv, http.MethodGet, "/templates/aliases/app", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	var alias struct {
		Public     bool   `json:"public"`
		TemplateID string `json:"templateID"`
	}
	require.NoError(t, json.Unmarshal(data, &alias))
	assert.False(t, alias.Public)
	assert.Regexp(t, `^[a-z0-9]{20}$`, alias.TemplateID)

	for _, tc := range []struct {
		name, method, route string
		body                any
		status              int
		message             string
	}{
		{"a tag that exists", http.MethodGet, "/templates/aliases/e2btest%2Fapp:v1", nil, http.StatusOK, ""},
		{"a tag that does not", http.MethodGet, "/templates/aliases/app:v2", nil, http.StatusNotFound, "tag 'v2' does not exist for template 'app'"},
		{"the default tag, absent", http.MethodGet, "/templates/aliases/app:default", nil, http.StatusNotFound, "tag 'default' does not exist for template 'app'"},
		{"a bad alias", http.MethodGet, "/templates/aliases/A%20B", nil, http.StatusBadRequest, "Invalid alias format: invalid template ID: A B"},
		{"another namespace", http.MethodGet, "/templates/aliases/acme%2Fapp", nil, http.StatusBadRequest, "namespace 'acme' must match your team 'e2btest'"},
		{"the base template", http.MethodGet, "/templates/aliases/base", nil, http.StatusForbidden, "You don't have access to this template alias"},
		{"an alias named tags", http.MethodGet, "/templates/aliases/tags", nil, http.StatusNotFound, "template 'tags' not found"},
		{"no tags", http.MethodPost, "/templates/tags", map[string]any{"target": "app:v1", "tags": []string{}}, http.StatusBadRequest, "At least one tag is required"},
		{"a bad tag", http.MethodPost, "/templates/tags", map[string]any{"target": "app:v1", "tags": []string{"a b"}}, http.StatusBadRequest, "Invalid tag: invalid tag 'a b': invalid tag: a b"},
		{"a bad target", http.MethodPost, "/templates/tags", map[string]any{"target": "a b", "tags": []string{"x"}}, http.StatusBadRequest, "Invalid target template format: invalid template ID: a b"},
		{"no such target", http.MethodPost, "/templates/tags", map[string]any{"target": "nope", "tags": []string{"x"}}, http.StatusNotFound, "template 'nope' not found"},
		{"tag the base", http.MethodPost, "/templates/tags", map[string]any{"target": "base", "tags": []string{"x"}}, http.StatusForbidden, "You don't have access to sandbox template 'base'"},
		{"untag the base", http.MethodDelete, "/templates/tags", map[string]any{"name": "base", "tags": []string{"x"}}, http.StatusForbidden, "You don't have access to sandbox template 'base'"},
		{"untag default", http.MethodDelete, "/templates/tags", map[string]any{"name": "app", "tags": []string{"DEFAULT"}}, http.StatusBadRequest, "Cannot delete the 'default' tag"},
		{"untag nothing", http.MethodDelete, "/templates/tags", map[string]any{"name": "app", "tags": []string{}}, http.StatusBadRequest, "At least one tag is required"},
		{"tags of none", http.MethodGet, "/templates/nope/tags", nil, http.StatusNotFound, "template 'nope' not found"},
		{"tags of the base", http.MethodGet, "/templates/base/tags", nil, http.StatusForbidden, "You don't have access to sandbox template 'base'"},
	} {
		status, _, data := call(t, srv, tc.method, tc.route, tc.body)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, data)
		if tc.message != "" {
			assert.JSONEq(t, `{"code":`+strconv.Itoa(tc.status)+`,"message":"`+tc.message+`"}`, string(data), tc.name)
		}
	}

	status, _, data = call(t, srv, http.MethodPost, "/templates/tags", map[string]any{"target": "app:v1", "tags": []string{"Stable", "stable", "prod"}})
	require.Equal(t, http.StatusCreated, status, string(data))
	var assigned struct {
		Tags    []string `json:"tags"`
		BuildID string   `json:"buildID"`
	}
	require.NoError(t, json.Unmarshal(data, &assigned))
	assert.ElementsMatch(t, []string{"prod", "stable"}, assigned.Tags)
	create(t, srv, map[string]any{"templateID": "app:prod"}) // an assigned tag makes sandboxes

	status, _, data = call(t, srv, http.MethodGet, "/templates/"+alias.TemplateID+"/tags", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	var tags []struct {
		Tag, BuildID, CreatedAt string
	}
	require.NoError(t, json.Unmarshal(data, &tags))
	require.Len(t, tags, 3)
	for i, want := range []string{"prod", "stable", "v1"} {
		assert.Equal(t, want, tags[i].Tag, "by tag")
		assert.Equal(t, assigned.BuildID, tags[i].BuildID, "one build")
	}
	status, _, _ = call(t, srv, http.MethodDelete, "/templates/tags", map[string]any{"name": "app", "tags": []string{"prod", "never"}})
	require.Equal(t, http.StatusNoContent, status)
	status, _, data = call(t, srv, http.MethodPost, "/sandboxes", map[string]any{"templateID": "app:prod"})
	assert.Equal(t, http.StatusNotFound, status, string(data))
}
