package daytonatest_test

import (
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The code-run route: python and javascript code run with their argv and
// envs as daytona, the output combined, artifact lines taken out (a chart
// answered among the artifacts), a timeout answered 408, and the daemon's
// answers for bad requests.
func TestCodeRun(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		want   string // the body, or for an error its code and message
	}{
		{"python", map[string]any{"language": "python", "argv": []string{"a", "b"}, "envs": map[string]string{"X": "x"},
			"code": "import sys, os, getpass\nprint(sys.argv[1:], os.environ['X'], getpass.getuser(), os.getcwd())\nprint('err', file=sys.stderr)\nsys.exit(3)"},
			http.StatusOK, `{"exitCode":3,"result":"['a', 'b'] x daytona /home/daytona\nerr\n"}`},
		{"javascript", map[string]any{"language": "javascript", "argv": []string{"one"}, "code": "console.log(process.argv.slice(1).join(','))"},
			http.StatusOK, `{"exitCode":0,"result":"one\n"}`},
		{"a chart", map[string]any{"language": "python", "code": "print('before')\n" +
			`print('dtn_artifact_k39fd2: {"type":"chart","value":{"type":"line","title":"t","elements":[]}}')` + "\n" +
			"print('dtn_artifact_k39fd2: not json')\nprint('after')"},
			http.StatusOK, `{"exitCode":0,"result":"before\nafter\n","artifacts":{"charts":[{"type":"line","title":"t","elements":[]}]}}`},
		{"timeout", map[string]any{"language": "python", "code": "import time\ntime.sleep(30)", "timeout": 1},
			http.StatusRequestTimeout, `REQUEST_TIMEOUT request timeout: command execution timeout`},
		{"unknown language", map[string]any{"language": "cobol", "code": "x"},
			http.StatusBadRequest, `BAD_REQUEST bad request: unsupported language: cobol`},
		{"no code", map[string]any{"language": "python"},
			http.StatusBadRequest, `INVALID_REQUEST_BODY invalid body request: Key: 'CodeRunRequest.Code' Error:Field validation for 'Code' failed on the 'required' tag`},
		{"bad env", map[string]any{"language": "python", "code": "x", "envs": map[string]string{"1X": "y"}},
			http.StatusBadRequest, `BAD_REQUEST bad request: invalid environment variable name: '1X'`},
	} {
		status, _, data := call(t, srv, http.MethodPost, tb+"/process/code-run", tc.body)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, data)
		if status == http.StatusOK {
			assert.JSONEq(t, tc.want, string(data), tc.name)
			continue
		}
		body := errorBody(t, data)
		assert.Equal(t, tc.want, body["code"].(string)+" "+body["message"].(string), tc.name)
	}
}
