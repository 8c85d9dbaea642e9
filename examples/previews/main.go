// Command previews exposes a web server running inside a sandbox through
// the preview proxy: the sandbox's port becomes a signed, expiring URL
// that answers only with the preview's token in a header, until it is
// revoked. It runs on the docker provider when an engine answers and has
// the default image (go run ./cmd/paddock-image), otherwise on the
// embedded local provider; -provider chooses.
//
//	go run ./examples/previews
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/local"
)

func main() {
	provider := flag.String("provider", "auto", "docker, local, or auto (docker when an engine with the default image answers)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *provider); err != nil {
		fmt.Fprintln(os.Stderr, "previews:", err)
		os.Exit(1)
	}
}

// pythonServer is Python's web server, on a port the kernel picks,
// serving the site directory; it prints its port first.
const pythonServer = `import functools, http.server
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="site")
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(s.server_address[1], flush=True)
s.serve_forever()`

// server starts the web server the sandbox has and prints its port once
// it listens: Python's where there is Python (the default image, most
// machines), else busybox's httpd (an image built on busybox), which is
// listening once it has put itself in the background, on a port of the
// sandbox's own loopback.
const server = `if command -v python3 >/dev/null 2>&1; then exec python3 -c "$1"; fi
httpd -p 127.0.0.1:8000 -h site || exit
echo 8000
exec sleep 2147483647`

// exposer is what this example needs of an adapter beyond the contract's
// required operations: previews and the proxy that serves them.
type exposer interface {
	paddock.Adapter
	Previews() http.Handler
}

func run(ctx context.Context, out io.Writer, provider string) error {
	// The preview proxy is an http.Handler the embedder mounts; the
	// adapter must know the URL it is mounted at.
	mux := http.NewServeMux()
	proxy := httptest.NewServer(mux)
	defer proxy.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)

	a, site, cleanup, err := open(ctx, provider, proxy.URL, key)
	if err != nil {
		return err
	}
	defer cleanup()
	mux.Handle("/preview/", a.Previews())
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	if err != nil {
		return err
	}
	defer rt.Close()

	sandboxes := rt.Adapter(a.Provider()) // the adapter, through the runtime
	h, err := sandboxes.Create(ctx, "previews-example", paddock.CreateOpts{})
	if err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sandboxes.Destroy(dctx, h)
	}()
	fmt.Fprintln(out, "sandbox on", a.Provider())
	if err := sandboxes.WriteFile(ctx, h, site+"/index.html", 0o644, strings.NewReader("<h1>hello from the sandbox</h1>\n")); err != nil {
		return err
	}
	web, err := sandboxes.Spawn(ctx, h, paddock.NewCmd("sh", "-c", server, "server", pythonServer), paddock.SpawnOpts{})
	if err != nil {
		return err
	}
	defer web.Close()
	port, err := firstLine(ctx, web)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "the sandbox serves its site on its own loopback")

	p, err := sandboxes.Expose(ctx, h, port, paddock.ExposeOpts{TTL: 5 * time.Minute})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "preview of the server's port, under the proxy: %v\n", p.Port == port && strings.HasPrefix(p.URL, proxy.URL+"/preview/"))
	fmt.Fprintf(out, "printed, the token is %v\n", p.Token) // a Secret never prints itself

	status, body, err := get(ctx, p, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "with the token: %d %q\n", status, body)
	status, _, err = get(ctx, p, false)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "without it:", status)

	if err := sandboxes.Revoke(ctx, h, p); err != nil {
		return err
	}
	status, _, err = get(ctx, p, true)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "after revoking it:", status)
	return sandboxes.TerminateSession(ctx, h, web.SessionID(), paddock.TerminateOpts{Mode: paddock.TerminateForce})
}

// open makes the adapter: docker when asked (or, for auto, when an engine
// answers and has the default image), else local. site is where the
// sandbox's working directory is, as a sandbox path.
func open(ctx context.Context, provider, base string, key []byte) (exposer, string, func(), error) {
	if provider == "docker" || provider == "auto" {
		d, err := docker.New(docker.Config{PreviewBaseURL: base, PreviewKey: key})
		if err == nil {
			if usable(ctx, d) {
				return d, "/workspace/site", func() { _ = d.Close() }, nil
			}
			_ = d.Close()
		}
		if provider == "docker" {
			return nil, "", nil, errors.New("no Docker engine with " + docker.DefaultImage + " answers (go run ./cmd/paddock-image builds it)")
		}
	}
	if provider != "local" && provider != "auto" {
		return nil, "", nil, fmt.Errorf("unknown provider %q (docker, local, auto)", provider)
	}
	l, err := local.New(local.Config{TempRoot: true, PreviewBaseURL: base, PreviewKey: key})
	if err != nil {
		return nil, "", nil, err
	}
	return l, "/site", func() { _ = l.Close() }, nil
}

// usable reports whether the engine answers and holds the default image.
func usable(ctx context.Context, d *docker.Adapter) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return d.Ping(ctx) == nil && d.ImageReady(ctx) == nil
}

// firstLine reads the web server's first line: its port.
func firstLine(ctx context.Context, s paddock.Stream) (int, error) {
	var line strings.Builder
	for !strings.Contains(line.String(), "\n") {
		ev, err := s.Next(ctx)
		if err != nil {
			return 0, fmt.Errorf("the web server's stream ended: %w", err)
		}
		switch ev.Kind {
		case paddock.EventStdout:
			line.Write(ev.Data)
		case paddock.EventStderr:
			return 0, fmt.Errorf("the web server failed: %s", ev.Data)
		case paddock.EventExit, paddock.EventError:
			return 0, fmt.Errorf("the web server ended: exit %d %v", ev.Code, ev.Err)
		}
	}
	first, _, _ := strings.Cut(line.String(), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// get fetches the preview, with its token in the header or without.
func get(ctx context.Context, p paddock.Preview, withToken bool) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return 0, "", err
	}
	if withToken {
		p.Authorize(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(bufio.NewReader(io.LimitReader(res.Body, 1<<20)))
	return res.StatusCode, string(body), err
}
