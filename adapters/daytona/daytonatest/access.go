package daytonatest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The per-sandbox limits of an organization with the control plane's
// default quota (cores, GB, GB).
const (
	maxCPUPerSandbox    = 4
	maxMemoryPerSandbox = 8
	maxDiskPerSandbox   = 10
)

// perSandboxLimit is the control plane's advice beside a limit passed.
const perSandboxLimit = "Need higher resource limits per-sandbox? Contact us at support@daytona.io and let us know about your use case."

// resize is POST /api/sandbox/{idOrName}/resize with {cpu, memory, disk}:
// a started sandbox may only grow its cores and memory, a stopped one may
// also change its disk, which never shrinks; each within the per-sandbox
// limits. The Sandbox object answers with the new resources.
func (s *Server) resize(w http.ResponseWriter, r *http.Request, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	var want [3]*int
	var invalid []string
	for i, field := range []string{"cpu", "memory", "disk"} {
		raw, ok := req[field]
		if !ok || string(raw) == "null" {
			continue
		}
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			invalid = append(invalid, field+" must not be less than 1", field+" must be a number conforming to the specified constraints")
			continue
		}
		if n < 1 {
			invalid = append(invalid, field+" must not be less than 1")
			continue
		}
		v := int(n)
		want[i] = &v
	}
	if len(invalid) > 0 {
		apiError(w, r, http.StatusBadRequest, strings.Join(invalid, ", "))
		return
	}
	s.onLive(w, r, func(sb *sandbox) {
		if status, msg := resizeCheck(sb, want[0], want[1], want[2]); status != 0 {
			apiError(w, r, status, msg)
			return
		}
		sb.cpu, sb.mem, sb.disk = orValue(want[0], sb.cpu), orValue(want[1], sb.mem), orValue(want[2], sb.disk)
		sb.updatedAt = time.Now().UTC()
		writeJSON(w, http.StatusOK, s.dto(sb))
	})
}

// resizeCheck is the control plane's refusal of a resize, in its order,
// or status 0.
func resizeCheck(sb *sandbox, cpu, mem, disk *int) (int, string) {
	switch {
	case sb.next != "":
		return http.StatusConflict, stateConflict
	case sb.state != "started" && sb.state != "stopped":
		return http.StatusBadRequest, "Sandbox must be in started or stopped state to resize"
	case cpu == nil && mem == nil && disk == nil:
		return http.StatusBadRequest, "No resource changes specified - sandbox is already at the desired configuration"
	case disk != nil && sb.state != "stopped":
		return http.StatusBadRequest, "Disk resize can only be performed on a stopped sandbox"
	case sb.state == "started" && cpu != nil && *cpu < sb.cpu:
		return http.StatusBadRequest, "Sandbox must be in stopped state to decrease the number of CPU cores"
	case sb.state == "started" && mem != nil && *mem < sb.mem:
		return http.StatusBadRequest, "Sandbox must be in stopped state to decrease memory"
	case disk != nil && *disk < sb.disk:
		return http.StatusBadRequest, "Sandbox disk size cannot be decreased"
	}
	newCPU, newMem, newDisk := orValue(cpu, sb.cpu), orValue(mem, sb.mem), orValue(disk, sb.disk)
	switch {
	case newCPU == sb.cpu && newMem == sb.mem && newDisk == sb.disk:
		return http.StatusBadRequest, "No resource changes specified - sandbox is already at the desired configuration"
	case newCPU > maxCPUPerSandbox:
		return http.StatusBadRequest, fmt.Sprintf("CPU request %d exceeds maximum allowed per sandbox (%d).\n%s", newCPU, maxCPUPerSandbox, perSandboxLimit)
	case newMem > maxMemoryPerSandbox:
		return http.StatusBadRequest, fmt.Sprintf("Memory request %dGB exceeds maximum allowed per sandbox (%dGB).\n%s", newMem, maxMemoryPerSandbox, perSandboxLimit)
	case newDisk > maxDiskPerSandbox:
		return http.StatusBadRequest, fmt.Sprintf("Disk request %dGB exceeds maximum allowed per sandbox (%dGB).\n%s", newDisk, maxDiskPerSandbox, perSandboxLimit)
	}
	return 0, ""
}

func orValue(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

// numberParam reads a numeric query parameter (def when absent), answering
// the control plane's 400 for one that is not a number.
func numberParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		apiError(w, r, http.StatusBadRequest, "Validation failed (numeric string is expected)")
		return 0, false
	}
	return int(n), true
}

// sshAccess is one SSH access token of a sandbox.
type sshAccess struct {
	id, sandboxID, token string
	created, expires     time.Time
}

// sshGatewayCommand is the command an SSH access names, its token for
// {{TOKEN}}, as Daytona's own local setup configures its gateway.
const sshGatewayCommand = "ssh -p 2222 {{TOKEN}}@localhost"

// tokenAlphabet is the control plane's URL alphabet without '_' and '-'.
const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomToken is n characters of tokenAlphabet.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
	}
	return string(b)
}

// previewToken is a sandbox's preview access token.
func previewToken() string { return strings.ToLower(randomToken(30)) }

// createSSHAccess is POST /api/sandbox/{idOrName}/ssh-access
// [?expiresInMinutes=60]: any earlier access of the sandbox is revoked and
// a new token made, answered with the command that uses it.
func (s *Server) createSSHAccess(w http.ResponseWriter, r *http.Request, _ []byte) {
	minutes, ok := numberParam(w, r, "expiresInMinutes", 60)
	if !ok {
		return
	}
	s.onLive(w, r, func(sb *sandbox) {
		s.revokeSSH(sb.id, "")
		now := time.Now().UTC()
		a := &sshAccess{id: newID(), sandboxID: sb.id, token: randomToken(32), created: now, expires: now.Add(time.Duration(minutes) * time.Minute)}
		s.ssh = append(s.ssh, a)
		writeJSON(w, http.StatusOK, map[string]any{"id": a.id, "sandboxId": a.sandboxID, "token": a.token,
			"expiresAt": a.expires.Format(time.RFC3339Nano), "createdAt": a.created.Format(time.RFC3339Nano),
			"updatedAt": a.created.Format(time.RFC3339Nano), "sshCommand": strings.ReplaceAll(sshGatewayCommand, "{{TOKEN}}", a.token)})
	})
}

// revokeSSHAccess is DELETE /api/sandbox/{idOrName}/ssh-access[?token=]:
// that token, or every one of the sandbox; the Sandbox object answers.
func (s *Server) revokeSSHAccess(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.onLive(w, r, func(sb *sandbox) {
		s.revokeSSH(sb.id, r.URL.Query().Get("token"))
		writeJSON(w, http.StatusOK, s.dto(sb))
	})
}

// revokeSSH drops a sandbox's access by token, or all of it (the caller
// holds s.mu).
func (s *Server) revokeSSH(sandboxID, token string) {
	kept := s.ssh[:0]
	for _, a := range s.ssh {
		if a.sandboxID != sandboxID || token != "" && a.token != token {
			kept = append(kept, a)
		}
	}
	s.ssh = kept
}

// validateSSHAccess is GET /api/sandbox/ssh-access/validate: only the SSH
// gateway's own credential may ask, so an organization's key is refused
// (403) as the control plane refuses it.
func (s *Server) validateSSHAccess(w http.ResponseWriter, r *http.Request, _ []byte) {
	apiError(w, r, http.StatusForbidden, "Invalid authentication context")
}

// SSHAccess answers whether token opens sandbox id's SSH access now, as
// the gateway would ask (the route itself is the gateway's).
func (s *Server) SSHAccess(token string) (sandboxID string, valid bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.ssh {
		if a.token == token && time.Now().Before(a.expires) {
			return a.sandboxID, true
		}
	}
	return "", false
}

// signedPreview is a signed preview URL's token: it opens one port of one
// sandbox, without a header, until it expires.
type signedPreview struct {
	sandboxID string
	port      int
	expires   time.Time
}

// ProxyDomain is where previews are served: a preview of port p of
// sandbox id is http://p-id.<ProxyDomain>. Names under it do not resolve
// here; send the request to the server's address with that Host.
func (s *Server) ProxyDomain() string {
	return "proxy.localhost:" + strings.TrimPrefix(s.URL()[strings.LastIndex(s.URL(), ":"):], ":")
}

// config is GET /api/config, which needs no key: the control plane's
// settings as Daytona's own local setup (its docker-compose) configures
// them, with this server's proxy and toolbox; no analytics service (the
// SDK then asks the control plane for metrics), no billing, no announcements.
func (s *Server) config(w http.ResponseWriter, _ *http.Request, _ []byte) {
	none := map[string]any{}
	writeJSON(w, http.StatusOK, map[string]any{
		"version":                "0.0.0-dev",
		"oidc":                   map[string]string{"issuer": "http://localhost:5556/dex", "clientId": "daytona", "audience": "daytona"},
		"linkedAccountsEnabled":  false,
		"proxyTemplateUrl":       "http://{{PORT}}-{{sandboxId}}." + s.ProxyDomain(),
		"proxyToolboxUrl":        s.URL() + "/toolbox",
		"defaultSnapshot":        "default",
		"dashboardUrl":           "http://localhost:3000/dashboard",
		"maxAutoArchiveInterval": 43200,
		"maintananceMode":        false, // sic
		"environment":            "docker-compose",
		"sshGatewayCommand":      sshGatewayCommand,
		"announcements":          none,
		"rateLimit":              map[string]any{"authenticated": none, "sandboxCreate": none, "sandboxLifecycle": none},
	})
}

// previewPort reads the route's port, answering the control plane's 400
// for one out of range.
func previewPort(w http.ResponseWriter, r *http.Request) (int, bool) {
	port, err := strconv.ParseFloat(r.PathValue("port"), 64)
	if err != nil || port < 1 || port > 65535 {
		apiError(w, r, http.StatusBadRequest, "Invalid port")
		return 0, false
	}
	return int(port), true
}

// previewURL is GET /api/sandbox/{idOrName}/ports/{port}/preview-url:
// the URL and the sandbox's token.
func (s *Server) previewURL(w http.ResponseWriter, r *http.Request, _ []byte) {
	port, ok := previewPort(w, r)
	if !ok {
		return
	}
	s.onLive(w, r, func(sb *sandbox) {
		writeJSON(w, http.StatusOK, map[string]any{"sandboxId": sb.id,
			"url": fmt.Sprintf("http://%d-%s.%s", port, sb.id, s.ProxyDomain()), "token": sb.authToken})
	})
}

// signedPreviewURL is GET …/ports/{port}/signed-preview-url
// [?expiresInSeconds=60]: a URL whose host carries a token of its own.
func (s *Server) signedPreviewURL(w http.ResponseWriter, r *http.Request, _ []byte) {
	port, ok := previewPort(w, r)
	if !ok {
		return
	}
	expires, ok := numberParam(w, r, "expiresInSeconds", 60)
	if !ok {
		return
	}
	if expires < 1 || expires > 24*60*60 {
		apiError(w, r, http.StatusBadRequest, "expiresInSeconds must be between 1 second and 24 hours")
		return
	}
	s.onLive(w, r, func(sb *sandbox) {
		token := strings.ToLower(randomToken(16))
		s.signed[token] = signedPreview{sandboxID: sb.id, port: port, expires: time.Now().Add(time.Duration(expires) * time.Second)}
		writeJSON(w, http.StatusOK, map[string]any{"sandboxId": sb.id, "port": port, "token": token,
			"url": fmt.Sprintf("http://%d-%s.%s", port, token, s.ProxyDomain())})
	})
}

// expireSignedPreviewURL is POST …/ports/{port}/signed-preview-url/{token}/expire.
func (s *Server) expireSignedPreviewURL(w http.ResponseWriter, r *http.Request, _ []byte) {
	port, ok := previewPort(w, r)
	if !ok {
		return
	}
	s.onLive(w, r, func(_ *sandbox) {
		if sp, ok := s.signed[r.PathValue("token")]; ok && sp.port == port {
			delete(s.signed, r.PathValue("token"))
		}
		w.WriteHeader(http.StatusOK)
	})
}

// isPreview reports whether r is for the preview proxy: its host is under
// the proxy domain.
func (s *Server) isPreview(r *http.Request) bool {
	return strings.HasSuffix(r.Host, "."+s.ProxyDomain())
}

// preview serves a request to http://<port>-<id or token>.<proxy domain>
// as Daytona's proxy does: a public sandbox, a signed token, the
// sandbox's token (X-Daytona-Preview-Token, or the DAYTONA_SANDBOX_AUTH_KEY
// query parameter) or the organization's key as a bearer let it through to
// that port of the sandbox (this machine's network is the sandbox's here),
// the credential taken off; anything else is sent to the login (307),
// which this server does not serve.
func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	label, _, _ := strings.Cut(r.Host, ".")
	portText, idOrToken, ok := strings.Cut(label, "-")
	port, err := strconv.Atoi(portText)
	if !ok || err != nil {
		http.Error(w, "invalid host format: port and sandbox ID not found", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	sb := s.find(idOrToken)
	allowed := sb != nil && sb.public
	if sp, signed := s.signed[idOrToken]; signed && sp.port == port && time.Now().Before(sp.expires) {
		sb, allowed = s.sandboxes[sp.sandboxID], true
	}
	if sb != nil && !allowed {
		switch {
		case r.Header.Get("Authorization") == "Bearer "+s.key:
			allowed = true
			r.Header.Del("Authorization")
		case r.Header.Get("X-Daytona-Preview-Token") == sb.authToken:
			allowed = true
		case r.URL.Query().Get("DAYTONA_SANDBOX_AUTH_KEY") == sb.authToken:
			allowed = true
			q := r.URL.Query()
			q.Del("DAYTONA_SANDBOX_AUTH_KEY")
			r.URL.RawQuery = q.Encode()
		}
	}
	started := sb != nil && sb.state == "started"
	s.mu.Unlock()
	r.Header.Del("X-Daytona-Preview-Token")
	switch {
	case sb == nil || !allowed:
		login := s.URL() + "/oidc/authorize?redirect_uri=" + url.QueryEscape("http://"+r.Host+r.URL.RequestURI())
		http.Redirect(w, r, login, http.StatusTemporaryRedirect)
	case !started:
		w.WriteHeader(http.StatusBadGateway)
	default:
		target := &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "failed to proxy request: "+err.Error(), http.StatusBadGateway)
		}
		proxy.ServeHTTP(w, r)
	}
}
