package daytonatest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// CodeRunRequest is the body of /process/code-run, with the daemon's type
// and field names: its validator names them in its messages.
type CodeRunRequest struct {
	Code     string            `json:"code" validate:"required"`
	Language string            `json:"language" validate:"required"`
	Argv     []string          `json:"argv"`
	Envs     map[string]string `json:"envs"`
	Timeout  *uint32           `json:"timeout"`
}

// artifactMarker starts an output line that carries an artifact (a
// chart) instead of output.
const artifactMarker = "dtn_artifact_k39fd2:"

// codeRun is POST /process/code-run, as this daemon version serves it:
// the code, base64 on a shell's stdin, run by python3, node, or ts-node
// through npx, with argv after it (joined by spaces, unquoted, as the
// daemon joins them); then as execute, with artifact lines taken out of
// the output. Python code that imports matplotlib runs unwrapped here:
// the daemon's wrapper that turns its figures into chart artifacts is
// not modelled (a program that prints artifact lines itself gets them).
func (s *Server) codeRun(w http.ResponseWriter, r *http.Request) {
	var req CodeRunRequest
	if !bindJSON(w, r, &req, "") {
		return
	}
	argv := strings.Join(req.Argv, " ")
	var script string
	switch req.Language {
	case "python":
		script = fmt.Sprintf("printf '%%s' '%s' | base64 -d | python3 -u - %s", base64.StdEncoding.EncodeToString([]byte(req.Code)), argv)
	case "javascript":
		script = fmt.Sprintf("printf '%%s' '%s' | base64 -d | node - %s", nodeCode(req.Code), argv)
	case "typescript":
		script = strings.Join([]string{`_f=/tmp/dtn_$$.ts`,
			fmt.Sprintf(`printf '%%s' '%s' | base64 -d > "$_f"`, nodeCode(req.Code)),
			fmt.Sprintf(`npm_config_loglevel=error npx ts-node -T --ignore-diagnostics 5107 -O '{"module":"CommonJS"}' "$_f" %s`, argv),
			`_dtn_ec=$?`, `rm -f "$_f"`, `exit $_dtn_ec`}, "; ")
	default:
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "bad request: unsupported language: "+req.Language)
		return
	}
	if !envsValid(w, r, req.Envs) {
		return
	}
	timeout := 0
	if req.Timeout != nil {
		timeout = int(*req.Timeout)
	}
	code, out, ok := s.runScript(w, r, sandboxOf(r), "", req.Envs, script, timeout)
	if !ok {
		return
	}
	result, charts := artifacts(string(out))
	answer := map[string]any{"exitCode": code, "result": result}
	if len(charts) > 0 {
		answer["artifacts"] = map[string]any{"charts": charts}
	}
	writeJSON(w, http.StatusOK, answer)
}

// nodeCode is JavaScript or TypeScript code, base64, after the line the
// daemon puts first so that process.argv holds only the program's own
// arguments after the interpreter's.
func nodeCode(code string) string {
	return base64.StdEncoding.EncodeToString([]byte("process.argv.splice(1, 1);\n" + code))
}

// artifacts takes the artifact lines out of output and answers the charts
// among them; a line that does not parse is dropped, as the daemon drops it.
func artifacts(output string) (string, []json.RawMessage) {
	var charts []json.RawMessage
	lines := strings.Split(output, "\n")
	kept := lines[:0]
	for _, line := range lines {
		payload, found := strings.CutPrefix(line, artifactMarker)
		if !found {
			kept = append(kept, line)
			continue
		}
		var artifact struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(payload)), &artifact) == nil && artifact.Type == "chart" && len(artifact.Value) > 0 {
			var chart map[string]any
			if json.Unmarshal(artifact.Value, &chart) == nil {
				charts = append(charts, artifact.Value)
			}
		}
	}
	return strings.Join(kept, "\n"), charts
}
