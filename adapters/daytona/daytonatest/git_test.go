package daytonatest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sh runs script in the sandbox through the execute route and answers
// its output, requiring exit 0.
func sh(t *testing.T, srv *daytonatest.Server, tb, script string) string {
	t.Helper()
	status, _, data := call(t, srv, http.MethodPost, tb+"/process/execute", map[string]any{"command": script})
	require.Equal(t, http.StatusOK, status, string(data))
	var res struct {
		ExitCode int    `json:"exitCode"`
		Result   string `json:"result"`
	}
	require.NoError(t, json.Unmarshal(data, &res))
	require.Equal(t, 0, res.ExitCode, "%s: %s", script, res.Result)
	return res.Result
}

// errorBody is the daemon's error body without its volatile timestamp.
func errorBody(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal(data, &body), string(data))
	delete(body, "timestamp")
	return body
}

// The git routes, as the daemon serves them through go-git: a clone of a
// repository in the sandbox, status with the upstream's ahead and behind,
// add, commit, history, push, branches created, checked out and deleted,
// pull; and the daemon's answers for bad bodies, a missing path, a
// directory that is no repository, an empty commit, a bad checkout.
func TestGitRoutes(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	sh(t, srv, tb, `set -e; git init -q -b main seed; cd seed
git -c user.name=seed -c user.email=seed@example.com commit -q --allow-empty -m init
git clone -q --bare . ../origin.git`)

	// Without a branch, go-git's single-branch clone fetches only HEAD,
	// so the branch has no upstream that git can see: not published.
	status, _, data := call(t, srv, http.MethodPost, tb+"/git/clone", map[string]any{"url": "file:///home/daytona/origin.git", "path": "plain"})
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Empty(t, data)
	status, _, data = call(t, srv, http.MethodGet, tb+"/git/status?path=plain", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.JSONEq(t, `{"currentBranch":"main","fileStatus":[],"branchPublished":false,"ahead":0,"behind":0}`, string(data))

	status, _, data = call(t, srv, http.MethodPost, tb+"/git/clone", map[string]any{"url": "/home/daytona/origin.git", "path": "work", "branch": "main"})
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Equal(t, "/home/daytona/origin.git", sh(t, srv, tb, "git -C work remote get-url origin | tr -d '\\n'"),
		"the origin is the URL the sandbox gave")

	sh(t, srv, tb, "echo hello > work/a.txt")
	status, _, data = call(t, srv, http.MethodGet, tb+"/git/status?path=work", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.JSONEq(t, `{"currentBranch":"main","fileStatus":[{"name":"a.txt","extra":"","staging":"Untracked","worktree":"Untracked"}],
		"branchPublished":true,"ahead":0,"behind":0}`, string(data))

	status, _, data = call(t, srv, http.MethodPost, tb+"/git/add", map[string]any{"path": "/home/daytona/work", "files": []string{"a.txt"}})
	require.Equal(t, http.StatusOK, status, string(data))
	status, _, data = call(t, srv, http.MethodPost, tb+"/git/commit", map[string]any{"path": "work", "message": "add a", "author": "Ada", "email": "ada@example.com"})
	require.Equal(t, http.StatusOK, status, string(data))
	var commit struct{ Hash string }
	require.NoError(t, json.Unmarshal(data, &commit))
	assert.Regexp(t, `^[0-9a-f]{40}$`, commit.Hash)
	assert.Equal(t, commit.Hash+" Ada <ada@example.com> add a", sh(t, srv, tb, "git -C work log -1 --format='%H %an <%ae> %s' | tr -d '\\n'"))
	status, _, data = call(t, srv, http.MethodGet, tb+"/git/status?path=work", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.JSONEq(t, `{"currentBranch":"main","fileStatus":[],"branchPublished":true,"ahead":1,"behind":0}`, string(data))

	status, _, data = call(t, srv, http.MethodGet, tb+"/git/history?path=work", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	var history []struct{ Hash, Author, Email, Message, Timestamp string }
	require.NoError(t, json.Unmarshal(data, &history))
	require.Len(t, history, 2)
	assert.Equal(t, [4]string{commit.Hash, "Ada", "ada@example.com", "add a"}, [4]string{history[0].Hash, history[0].Author, history[0].Email, history[0].Message})
	assert.Equal(t, "init\n", history[1].Message)

	status, _, data = call(t, srv, http.MethodPost, tb+"/git/push", map[string]any{"path": "work"})
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Equal(t, "add a", sh(t, srv, tb, "git -C origin.git log -1 --format=%s | tr -d '\\n'"))
	status, _, data = call(t, srv, http.MethodPost, tb+"/git/pull", map[string]any{"path": "work"})
	assert.Equal(t, http.StatusOK, status, "already up to date is a success: %s", data)
	if os.Geteuid() == 0 && srv.Mapped() {
		assert.Empty(t, sh(t, srv, tb, "find work origin.git ! -user daytona"), "what the daemon writes is daytona's")
	}

	status, _, data = call(t, srv, http.MethodPost, tb+"/git/branches", map[string]any{"path": "work", "name": "feature"})
	require.Equal(t, http.StatusCreated, status, string(data))
	status, _, data = call(t, srv, http.MethodGet, tb+"/git/branches?path=work", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.JSONEq(t, `{"branches":["feature","main"]}`, string(data))
	status, _, data = call(t, srv, http.MethodPost, tb+"/git/checkout", map[string]any{"path": "work", "branch": "main"})
	require.Equal(t, http.StatusOK, status, string(data))
	status, _, _ = call(t, srv, http.MethodDelete, tb+"/git/branches", map[string]any{"path": "work", "name": "feature"})
	require.Equal(t, http.StatusNoContent, status)
	status, _, data = call(t, srv, http.MethodGet, tb+"/git/branches?path=work", nil)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"branches":["main"]}`, string(data))

	for _, tc := range []struct {
		name, method, route string
		body                any
		status              int
		want                map[string]any
	}{
		{"no repository", http.MethodGet, "/git/status?path=/tmp", nil, http.StatusNotFound,
			map[string]any{"code": "NOT_FOUND", "message": "not found: repository does not exist"}},
		{"no path", http.MethodGet, "/git/history", nil, http.StatusBadRequest,
			map[string]any{"code": "BAD_REQUEST", "message": "bad request: path is required"}},
		{"required fields", http.MethodPost, "/git/add", map[string]any{}, http.StatusBadRequest,
			map[string]any{"code": "INVALID_REQUEST_BODY", "message": "invalid body request: invalid request body: " +
				"Key: 'GitAddRequest.Path' Error:Field validation for 'Path' failed on the 'required' tag\n" +
				"Key: 'GitAddRequest.Files' Error:Field validation for 'Files' failed on the 'required' tag"}},
		{"not JSON", http.MethodPost, "/git/commit", []byte("{"), http.StatusBadRequest,
			map[string]any{"code": "INVALID_REQUEST_BODY", "message": "invalid body request: invalid request body: unexpected EOF"}},
		{"empty commit", http.MethodPost, "/git/commit", map[string]any{"path": "work", "message": "m", "author": "a", "email": "e"},
			http.StatusInternalServerError, map[string]any{"code": "INTERNAL_SERVER_ERROR", "message": "cannot create empty commit: clean working tree"}},
		{"unknown branch", http.MethodPost, "/git/checkout", map[string]any{"path": "work", "branch": "nope"}, http.StatusNotFound,
			map[string]any{"code": "NOT_FOUND", "message": "not found: failed to checkout branch or commit 'nope': reference not found"}},
		{"newer SDKs' route", http.MethodPost, "/git/init", map[string]any{"path": "x"}, http.StatusNotFound, nil},
	} {
		status, _, data := call(t, srv, tc.method, tb+tc.route, tc.body)
		assert.Equal(t, tc.status, status, "%s: %s", tc.name, data)
		if tc.want == nil {
			assert.Equal(t, "404 page not found", string(data), tc.name)
			continue
		}
		body := errorBody(t, data)
		for k, v := range tc.want {
			assert.Equal(t, v, body[k], "%s: %s", tc.name, k)
		}
	}
}
