package daytonatest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The language servers, as the daemon keeps them: one per language and
// project, a real language server (typescript-language-server --stdio,
// or pylsp) found on the sandbox's PATH and spoken to over its stdio. The
// daemon's quirks are kept, since a client sees them: a start makes a
// TypeScript server whatever the language, unless a request before it
// made the server of its language; a stop sends "shutdown" as a
// notification; every failure is its status with an empty body.

// lspServer is one language server of a sandbox.
type lspServer struct {
	language string // the language it was made for: which program it runs
	project  string // the project's path, as the request named it

	mu   sync.Mutex
	conn *lspConn // nil until it is initialized
}

// lspConn is a running language server and the JSON-RPC calls waiting
// for its answers.
type lspConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex // one message written at a time
	mu     sync.Mutex
	nextID int64
	calls  map[int64]chan lspAnswer
	ended  chan struct{} // closed when its stdout ends
}

// lspAnswer is the answer to one call.
type lspAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var errLSPEnded = errors.New("jsonrpc2: connection is closed")

// lspKey is the daemon's key for a language and project.
func lspKey(language, project string) string {
	return base64.StdEncoding.EncodeToString([]byte(language + ":" + project))
}

// lspProgram is the command line of a language's server.
func lspProgram(language string) []string {
	if language == "python" {
		return []string{"pylsp"}
	}
	return []string{"typescript-language-server", "--stdio"}
}

// startLSP runs the server's program in the sandbox as the daemon runs
// it, and initializes it for its project; ctx bounds the wait for its
// answer.
func (s *Server) startLSP(ctx context.Context, sb *sandbox, ls *lspServer) error {
	cmd, stdin, stdout, err := sb.startPiped(home, lspProgram(ls.language)...)
	if err != nil {
		return err
	}
	c := &lspConn{cmd: cmd, stdin: stdin, calls: map[int64]chan lspAnswer{}, ended: make(chan struct{})}
	s.Go(func() { c.read(stdout) })
	root := ls.project
	if strings.HasPrefix(root, "/") {
		root = sb.space.Seen(root)
	}
	// The daemon names itself as the process to watch; here that would be
	// this server, which a server running as daytona may not signal and
	// would take for dead within seconds: none is named instead.
	init := map[string]any{
		"processId":  nil,
		"clientInfo": map[string]string{"name": "datyona-" + ls.language + "-lsp-client", "version": "0.0.1"},
		"rootUri":    "file://" + root,
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"completion": map[string]any{"dynamicRegistration": true, "contextSupport": true,
					"completionItem": map[string]any{"snippetSupport": true, "commitCharactersSupport": true,
						"documentationFormat": []string{"markdown", "plaintext"}, "deprecatedSupport": true, "preselectSupport": true}},
				"documentSymbol": map[string]any{"dynamicRegistration": true,
					"symbolKind": map[string]any{"valueSet": []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}}},
			},
			"workspace": map[string]any{"symbol": map[string]any{"dynamicRegistration": true}},
		},
	}
	if err := c.call(ctx, "initialize", init, nil); err != nil {
		c.kill()
		return err
	}
	if err := c.notify("initialized", nil); err != nil {
		c.kill()
		return err
	}
	ls.conn = c
	return nil
}

// write sends one message, framed as the protocol frames it.
func (c *lspConn) write(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = fmt.Fprintf(c.stdin, "Content-Length: %d\r\n\r\n%s", len(data), data)
	return err
}

func (c *lspConn) notify(method string, params any) error {
	return c.write(map[string]any{"method": method, "params": params})
}

// call sends a request and decodes its result into result (when not
// nil); it ends with ctx or with the server.
func (c *lspConn) call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	answer := make(chan lspAnswer, 1)
	c.calls[id] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	if err := c.write(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return err
	}
	select {
	case a := <-answer:
		if a.Error != nil {
			return fmt.Errorf("jsonrpc2: code %d message: %s", a.Error.Code, a.Error.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(a.Result, result)
	case <-c.ended:
		return errLSPEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read takes the server's messages until its stdout ends: answers go to
// their calls, its own requests are answered with a null result (as the
// daemon's handler answers them), notifications are dropped.
func (c *lspConn) read(stdout io.Reader) {
	defer close(c.ended)
	in := bufio.NewReader(stdout)
	for {
		header, err := textproto.NewReader(in).ReadMIMEHeader()
		if err != nil {
			return
		}
		n, err := strconv.Atoi(header.Get("Content-Length"))
		if err != nil || n < 0 || n > 64<<20 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(in, body); err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			lspAnswer
		}
		if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
			continue
		}
		if msg.Method != "" {
			_ = c.write(map[string]any{"id": msg.ID, "result": nil})
			continue
		}
		id, err := strconv.ParseInt(string(msg.ID), 10, 64)
		if err != nil {
			continue
		}
		c.mu.Lock()
		answer := c.calls[id]
		c.mu.Unlock()
		if answer != nil {
			answer <- msg.lspAnswer
		}
	}
}

// kill ends the server's processes.
func (c *lspConn) kill() {
	_ = c.stdin.Close()
	_ = stubproc.SignalGroup(c.cmd.Process.Pid, syscall.SIGKILL) // its own children too (tsserver)
	_ = c.cmd.Wait()
}

// lspFor is the daemon's lookup of a language and project's server: the
// one it has, else a new one for typescript or python (kept, not
// started), else an unsupported language.
func (sb *sandbox) lspFor(language, project string) (*lspServer, error) {
	sb.smu.Lock()
	defer sb.smu.Unlock()
	key := lspKey(language, project)
	if ls := sb.lsps[key]; ls != nil {
		return ls, nil
	}
	if language != "typescript" && language != "python" {
		return nil, fmt.Errorf("unsupported language: %s", language)
	}
	ls := &lspServer{language: language, project: project}
	sb.lsps[key] = ls
	return ls, nil
}

// lspRequest is the body of the language server routes.
type lspRequest struct {
	LanguageID    string       `json:"languageId"`
	PathToProject string       `json:"pathToProject"`
	URI           string       `json:"uri"`
	Position      *lspPosition `json:"position"`
	Context       *struct {
		TriggerKind      int     `json:"triggerKind"`
		TriggerCharacter *string `json:"triggerCharacter,omitempty"`
	} `json:"context,omitempty"`
}

type lspPosition struct {
	Character int `json:"character"`
	Line      int `json:"line"`
}

// bindLSP decodes a route's body and checks what the daemon's validator
// checks (fields holds what the route requires beyond the language and
// project: "uri", "position"); false once it has answered the empty 400.
func bindLSP(w http.ResponseWriter, r *http.Request, req *lspRequest, fields ...string) bool {
	ok := json.NewDecoder(r.Body).Decode(req) == nil && req.LanguageID != "" && req.PathToProject != ""
	for _, f := range fields {
		switch f {
		case "uri":
			ok = ok && req.URI != ""
		case "position": // every field is required, and zero is no value; a context, if any, needs its kind
			ok = ok && req.Position != nil && req.Position.Line != 0 && req.Position.Character != 0 &&
				(req.Context == nil || req.Context.TriggerKind != 0)
		}
	}
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
	}
	return ok
}

// lspNamed binds a start or stop's body: the sandbox, the daemon's key
// for the server it names, and that server (made, as a TypeScript one,
// when create is set and there is none); ok is false once it has answered.
func lspNamed(w http.ResponseWriter, r *http.Request, create bool) (sb *sandbox, key string, ls *lspServer, ok bool) {
	var req lspRequest
	if !bindLSP(w, r, &req) {
		return nil, "", nil, false
	}
	sb, key = sandboxOf(r), lspKey(req.LanguageID, req.PathToProject)
	sb.smu.Lock()
	defer sb.smu.Unlock()
	ls = sb.lsps[key]
	if ls == nil && create {
		ls = &lspServer{language: "typescript", project: req.PathToProject}
		sb.lsps[key] = ls
	}
	return sb, key, ls, true
}

// lspStart is POST /lsp/start: the server initialized (a TypeScript one
// unless the language's was made before), 200 with no body; 500 when it
// cannot start.
func (s *Server) lspStart(w http.ResponseWriter, r *http.Request) {
	sb, _, ls, ok := lspNamed(w, r, true)
	if !ok {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.conn == nil {
		if err := s.startLSP(r.Context(), sb, ls); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// lspStop is POST /lsp/stop: "shutdown" notified and the server
// forgotten; 500 for a project without one, or one never started.
func (s *Server) lspStop(w http.ResponseWriter, r *http.Request) {
	sb, key, ls, ok := lspNamed(w, r, false)
	if !ok {
		return
	}
	var c *lspConn
	if ls != nil {
		ls.mu.Lock()
		c, ls.conn = ls.conn, nil
		ls.mu.Unlock()
	}
	if c == nil { // none, or one never started: the daemon fails, and keeps it
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	err := c.notify("shutdown", nil)
	c.kill()
	sb.smu.Lock()
	delete(sb.lsps, key)
	sb.smu.Unlock()
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// lspReady is the started server of a language and project, or nil once
// it has answered the daemon's 400.
func (sb *sandbox) lspReady(w http.ResponseWriter, language, project string) (*lspServer, *lspConn) {
	ls, err := sb.lspFor(language, project)
	var c *lspConn
	if err == nil {
		ls.mu.Lock()
		c = ls.conn
		ls.mu.Unlock()
	}
	if c == nil {
		w.WriteHeader(http.StatusBadRequest)
	}
	return ls, c
}

// lspDocument binds a document route's body (fields as bindLSP takes
// them) and finds its started server; c is nil once it has answered.
func lspDocument(w http.ResponseWriter, r *http.Request, fields ...string) (req lspRequest, sb *sandbox, ls *lspServer, c *lspConn) {
	if !bindLSP(w, r, &req, fields...) {
		return req, nil, nil, nil
	}
	sb = sandboxOf(r)
	ls, c = sb.lspReady(w, req.LanguageID, req.PathToProject)
	return req, sb, ls, c
}

// lspURI is uri as the server sees the file it names.
func (sb *sandbox) lspURI(uri string) string {
	p, ok := strings.CutPrefix(uri, "file://")
	if !ok || !strings.HasPrefix(p, "/") {
		return uri
	}
	return "file://" + sb.space.Seen(p)
}

// lspAnswerJSON answers v, with this machine's paths in it read as the
// sandbox's.
func (sb *sandbox) lspAnswerJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, sb.seen(string(data)))
}

// lspDidOpen is POST /lsp/did-open: the file's text sent to the server
// under the server's language.
func (s *Server) lspDidOpen(w http.ResponseWriter, r *http.Request) {
	req, sb, ls, c := lspDocument(w, r, "uri")
	if c == nil {
		return
	}
	host, err := sb.resolve(strings.TrimPrefix(req.URI, "file://"))
	var text []byte
	if err == nil {
		text, err = os.ReadFile(host)
	}
	if err == nil {
		err = c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": sb.lspURI(req.URI), "languageId": ls.language, "version": 1, "text": string(text)}})
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// lspDidClose is POST /lsp/did-close.
func (s *Server) lspDidClose(w http.ResponseWriter, r *http.Request) {
	req, sb, _, c := lspDocument(w, r, "uri")
	if c == nil {
		return
	}
	if c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": sb.lspURI(req.URI)}}) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// completionItem is a completion as the daemon passes it on.
type completionItem struct {
	Label         string  `json:"label"`
	Kind          *int    `json:"kind,omitempty"`
	Detail        *string `json:"detail,omitempty"`
	Documentation any     `json:"documentation,omitempty"`
	SortText      *string `json:"sortText,omitempty"`
	FilterText    *string `json:"filterText,omitempty"`
	InsertText    *string `json:"insertText,omitempty"`
}

// lspCompletions is POST /lsp/completions: {isIncomplete, items}, the
// server's list or array of items.
func (s *Server) lspCompletions(w http.ResponseWriter, r *http.Request) {
	req, sb, _, c := lspDocument(w, r, "uri", "position")
	if c == nil {
		return
	}
	params := map[string]any{"textDocument": map[string]any{"uri": sb.lspURI(req.URI)}, "position": req.Position}
	if req.Context != nil {
		params["context"] = req.Context
	}
	var result json.RawMessage
	if err := c.call(r.Context(), "textDocument/completion", params, &result); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var answer struct {
		IsIncomplete bool             `json:"isIncomplete"`
		Items        []completionItem `json:"items"`
	}
	var list struct {
		IsIncomplete bool              `json:"isIncomplete"`
		Items        *[]completionItem `json:"items"`
	}
	if json.Unmarshal(result, &answer.Items) != nil { // not an array of items: a list
		if json.Unmarshal(result, &list) == nil && list.Items != nil {
			answer.IsIncomplete, answer.Items = list.IsIncomplete, *list.Items
		}
	}
	sb.lspAnswerJSON(w, answer)
}

// lspSymbol is a symbol as the daemon passes it on.
type lspSymbol struct {
	Kind     int `json:"kind"`
	Location struct {
		Range struct {
			End   lspPosition `json:"end"`
			Start lspPosition `json:"start"`
		} `json:"range"`
		URI string `json:"uri"`
	} `json:"location"`
	Name string `json:"name"`
}

// lspQuery is a GET route's query parameters, each required in turn; ok
// is false once it has answered the daemon's 400.
func lspQuery(w http.ResponseWriter, r *http.Request, names ...string) (values []string, ok bool) {
	for _, n := range names {
		v := r.URL.Query().Get(n)
		if v == "" {
			w.WriteHeader(http.StatusBadRequest)
			return nil, false
		}
		values = append(values, v)
	}
	return values, true
}

// lspSymbols answers a symbol request made of a GET route's query.
func (s *Server) lspSymbols(w http.ResponseWriter, r *http.Request, language, project, method string, params any) {
	sb := sandboxOf(r)
	_, c := sb.lspReady(w, language, project)
	if c == nil {
		return
	}
	var symbols []lspSymbol
	if err := c.call(r.Context(), method, params, &symbols); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	sb.lspAnswerJSON(w, symbols)
}

// lspDocumentSymbols is GET /lsp/document-symbols?languageId&pathToProject&uri.
func (s *Server) lspDocumentSymbols(w http.ResponseWriter, r *http.Request) {
	q, ok := lspQuery(w, r, "languageId", "pathToProject", "uri")
	if ok {
		s.lspSymbols(w, r, q[0], q[1], "textDocument/documentSymbol",
			map[string]any{"textDocument": map[string]any{"uri": sandboxOf(r).lspURI(q[2])}})
	}
}

// lspWorkspaceSymbols is GET /lsp/workspacesymbols?query&languageId&pathToProject.
func (s *Server) lspWorkspaceSymbols(w http.ResponseWriter, r *http.Request) {
	q, ok := lspQuery(w, r, "query", "languageId", "pathToProject")
	if ok {
		s.lspSymbols(w, r, q[1], q[2], "workspace/symbol", map[string]any{"query": q[0]})
	}
}

// stopLSPs ends every language server of the sandbox.
func (sb *sandbox) stopLSPs() {
	for _, ls := range takeAll(&sb.smu, &sb.lsps) {
		ls.mu.Lock()
		if ls.conn != nil {
			ls.conn.kill()
			ls.conn = nil
		}
		ls.mu.Unlock()
	}
}
