package daytonatest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The language server routes as the daemon serves them, with a real
// typescript-language-server: a server is started per language and
// project (a TypeScript one whatever the language, the daemon's way),
// opened files give their symbols and completions with the sandbox's
// paths, the workspace is searched; the validator's refusals (a position
// on line or column 0 among them), a server not started, an unsupported
// language and a second stop answer their status with no body.
func TestLanguageServers(t *testing.T) {
	t.Parallel()
	adaptertest.NeedsTools(t, "typescript-language-server")
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "lsp")
	upload(t, srv, tb, "/home/daytona/proj/index.ts",
		"export function greet(name: string): string { return 'hi ' + name }\n"+
			"export class Greeter { hello() { return greet('x') } }\n"+
			"const g = new Greeter()\n"+
			"g.\n")
	upload(t, srv, tb, "/home/daytona/proj/tsconfig.json", `{"compilerOptions":{"strict":true}}`)
	project := map[string]any{"languageId": "typescript", "pathToProject": "/home/daytona/proj"}
	doc := map[string]any{"languageId": "typescript", "pathToProject": "/home/daytona/proj", "uri": "file:///home/daytona/proj/index.ts"}
	post := func(route string, body any) (int, []byte) {
		status, _, data := call(t, srv, http.MethodPost, tb+route, body)
		return status, data
	}

	status, data := post("/lsp/did-open", doc)
	require.Equal(t, http.StatusBadRequest, status, "not started yet")
	assert.Empty(t, data)
	status, data = post("/lsp/start", project)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Empty(t, data)
	status, _ = post("/lsp/start", project)
	require.Equal(t, http.StatusOK, status, "a started server is kept")
	status, _ = post("/lsp/did-open", doc)
	require.Equal(t, http.StatusOK, status)

	q := url.Values{"languageId": {"typescript"}, "pathToProject": {"/home/daytona/proj"}, "uri": {"file:///home/daytona/proj/index.ts"}}
	status, _, data = call(t, srv, http.MethodGet, tb+"/lsp/document-symbols?"+q.Encode(), nil)
	require.Equal(t, http.StatusOK, status, string(data))
	var symbols []struct {
		Kind     int    `json:"kind"`
		Name     string `json:"name"`
		Location struct {
			URI   string `json:"uri"`
			Range struct {
				Start struct{ Line, Character int } `json:"start"`
			} `json:"range"`
		} `json:"location"`
	}
	require.NoError(t, json.Unmarshal(data, &symbols))
	kinds := map[string]int{}
	for _, s := range symbols {
		kinds[s.Name] = s.Kind
		assert.Equal(t, "file:///home/daytona/proj/index.ts", s.Location.URI, "the sandbox's path")
	}
	assert.Equal(t, 12, kinds["greet"], "a function: %s", data)
	assert.Equal(t, 5, kinds["Greeter"], "a class: %s", data)

	status, data = post("/lsp/completions", map[string]any{"languageId": "typescript", "pathToProject": "/home/daytona/proj",
		"uri": "file:///home/daytona/proj/index.ts", "position": map[string]int{"line": 3, "character": 2}})
	require.Equal(t, http.StatusOK, status, string(data))
	var list struct {
		IsIncomplete *bool `json:"isIncomplete"`
		Items        []struct {
			Label string `json:"label"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(data, &list))
	require.NotNil(t, list.IsIncomplete)
	var labels []string
	for _, it := range list.Items {
		labels = append(labels, it.Label)
	}
	assert.Contains(t, labels, "hello", "the class's method")

	q = url.Values{"query": {"Greet"}, "languageId": {"typescript"}, "pathToProject": {"/home/daytona/proj"}}
	status, _, data = call(t, srv, http.MethodGet, tb+"/lsp/workspacesymbols?"+q.Encode(), nil)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Contains(t, string(data), `"name":"Greeter"`)

	for _, tc := range []struct {
		name, method, route string
		body                any
		status              int
	}{
		{"line 0 is no position", http.MethodPost, "/lsp/completions", map[string]any{"languageId": "typescript",
			"pathToProject": "/home/daytona/proj", "uri": "file:///home/daytona/proj/index.ts", "position": map[string]int{"line": 0, "character": 2}}, http.StatusBadRequest},
		{"no uri", http.MethodPost, "/lsp/did-open", project, http.StatusBadRequest},
		{"no project", http.MethodPost, "/lsp/start", map[string]any{"languageId": "typescript"}, http.StatusBadRequest},
		{"not json", http.MethodPost, "/lsp/start", []byte("{"), http.StatusBadRequest},
		{"a missing file", http.MethodPost, "/lsp/did-open", map[string]any{"languageId": "typescript",
			"pathToProject": "/home/daytona/proj", "uri": "file:///home/daytona/proj/none.ts"}, http.StatusBadRequest},
		{"an unsupported language", http.MethodPost, "/lsp/did-open", map[string]any{"languageId": "cobol",
			"pathToProject": "/x", "uri": "file:///x/y"}, http.StatusBadRequest},
		{"no uri in the query", http.MethodGet, "/lsp/document-symbols?languageId=typescript&pathToProject=/home/daytona/proj", nil, http.StatusBadRequest},
		{"no query", http.MethodGet, "/lsp/workspacesymbols?languageId=typescript&pathToProject=/home/daytona/proj", nil, http.StatusBadRequest},
		{"a server never started", http.MethodPost, "/lsp/stop", map[string]any{"languageId": "typescript", "pathToProject": "/elsewhere"}, http.StatusInternalServerError},
		{"a context without its kind", http.MethodPost, "/lsp/completions", map[string]any{"languageId": "typescript",
			"pathToProject": "/home/daytona/proj", "uri": "file:///home/daytona/proj/index.ts", "position": map[string]int{"line": 3, "character": 2},
			"context": map[string]any{"triggerCharacter": "."}}, http.StatusBadRequest},
		// Only completions take a context: elsewhere it is a field the
		// daemon's request type does not have, and is ignored.
		{"did-close, a context ignored", http.MethodPost, "/lsp/did-close", map[string]any{"languageId": "typescript",
			"pathToProject": "/home/daytona/proj", "uri": "file:///home/daytona/proj/index.ts", "context": map[string]any{}}, http.StatusOK},
		{"stop", http.MethodPost, "/lsp/stop", project, http.StatusOK},
		{"stopped already", http.MethodPost, "/lsp/stop", project, http.StatusInternalServerError},
		{"gone with its stop", http.MethodPost, "/lsp/did-open", doc, http.StatusBadRequest},
		// The daemon's start makes a TypeScript server whatever the
		// language, unless a request before it made the language's own.
		{"cobol starts typescript", http.MethodPost, "/lsp/start", map[string]any{"languageId": "cobol", "pathToProject": "/home/daytona/proj"}, http.StatusOK},
	} {
		status, _, data := call(t, srv, tc.method, tb+tc.route, tc.body)
		assert.Equal(t, tc.status, status, tc.name)
		if status != http.StatusOK {
			assert.Empty(t, data, tc.name)
		}
	}

	if _, err := exec.LookPath("pylsp"); err != nil {
		// A request made python's server (not started); a start then runs
		// pylsp, which is not here: the daemon's 500.
		py := map[string]any{"languageId": "python", "pathToProject": "/home/daytona/proj", "uri": "file:///home/daytona/proj/index.ts"}
		status, _ = post("/lsp/did-open", py)
		require.Equal(t, http.StatusBadRequest, status)
		status, data = post("/lsp/start", py)
		assert.Equal(t, http.StatusInternalServerError, status)
		assert.Empty(t, data)
	}
}
