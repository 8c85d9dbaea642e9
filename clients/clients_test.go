//go:build unix

package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain removes the paddockd binary the tests built, then checks for
// leaked goroutines.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// Tokens of the paddockd the clients' tests reach: one that sees every
// sandbox, and two tenants'.
const (
	adminToken   = "admin-token-0123456789"
	tenantAToken = "tenant-a-token-0123456789"
	tenantBToken = "tenant-b-token-0123456789"
)

// TestTypeScript runs the TypeScript client's tests (clients/typescript,
// node --test on tsc's output) against paddockd.
func TestTypeScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("typescript", "node_modules", "@connectrpc", "connect-node"))
	}
	if err != nil {
		unavailable(t, "the TypeScript client needs Node.js and its packages (npm ci --prefix clients/typescript): %v", err)
	}
	// Compiled outside the tree: the output's node_modules is the client's.
	out := t.TempDir()
	src, err := filepath.Abs("typescript")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Join(src, "node_modules"), filepath.Join(out, "node_modules")))
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "package.json"), pkg, 0o644))
	tsc := filepath.Join(src, "node_modules", "typescript", "bin", "tsc")
	b, err := exec.Command(node, tsc, "-p", src, "--outDir", out).CombinedOutput()
	require.NoError(t, err, "tsc: %s", b)
	b, err = exec.Command(node, tsc, "-p", filepath.Join("..", "examples", "typescript"), "--outDir", filepath.Join(out, "example")).CombinedOutput()
	require.NoError(t, err, "tsc, the example: %s", b)
	runClientTests(t, exec.Command(node, "--test", "--test-concurrency=1", filepath.Join(out, "test")),
		exec.Command(node, filepath.Join(out, "example", "examples", "typescript", "quickstart.js")),
		"tick 3\nexit 0\nwritten from typescript\n")
}

// TestPython runs the Python client's tests (clients/python, unittest)
// against paddockd.
func TestPython(t *testing.T) {
	t.Parallel()
	python := ""
	for _, candidate := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(candidate); err == nil && exec.Command(p, "-c", "import grpc, google.protobuf").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		unavailable(t, "the Python client needs python3 with grpcio and protobuf (Debian: python3-grpcio python3-protobuf)")
	}
	tests := exec.Command(python, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	tests.Dir = "python"
	example := exec.Command(python, filepath.Join("..", "examples", "python", "quickstart.py"))
	runClientTests(t, tests, example, "tick 3\nexit 0\nwritten from python\n")
}

// pythonDir is the Python client's directory, absolute.
func pythonDir(t *testing.T) string {
	dir, err := filepath.Abs("python")
	require.NoError(t, err)
	return dir
}

// unavailable skips a test whose client runtime is not installed, or
// fails it under CI, which installs it.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// runClientTests runs tests, then example, against a paddockd of their
// own (local and the fake, tokens above; the example with the admin's) and
// a failing server: the tests must pass, and the example print want.
func runClientTests(t *testing.T, tests, example *exec.Cmd, want string) {
	url := startPaddockd(t)
	env := append(os.Environ(),
		"PADDOCKD_URL="+url,
		"PADDOCKD_TOKEN="+adminToken,
		"PADDOCKD_TENANT_A_TOKEN="+tenantAToken,
		"PADDOCKD_TENANT_B_TOKEN="+tenantBToken,
		"PADDOCKD_FAILING_URL="+serveFailures(t),
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONPATH="+pythonDir(t), // the examples import the client's package
	)
	tests.Env = env
	out, err := runBounded(tests, 5*time.Minute)
	t.Logf("%s", out)
	require.NoError(t, err, "the client's tests failed")
	example.Env = env
	out, err = runBounded(example, 2*time.Minute)
	require.NoError(t, err, "the example failed: %s", out)
	require.Contains(t, string(out), want, "the example's output")
}

// runBounded runs cmd, killing it after bound (a hang bound, not a verdict).
func runBounded(cmd *exec.Cmd, bound time.Duration) ([]byte, error) {
	var out bytes.Buffer // one writer for both: os/exec writes it from one goroutine at a time
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(bound):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = errors.Join(errors.New("killed after "+bound.String()), <-done)
	}
	return out.Bytes(), err // Wait returned: nothing writes it any more
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildDir  string
)

// paddockdBinary is paddockd built once for the package's tests, in
// buildDir (TestMain removes it).
func paddockdBinary(t *testing.T) string {
	buildOnce.Do(func() {
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			goTool = "go"
		}
		buildDir, buildErr = os.MkdirTemp("", "paddockd-clients-")
		if buildErr != nil {
			return
		}
		binary = filepath.Join(buildDir, "paddockd")
		var b []byte
		b, buildErr = exec.Command(goTool, "build", "-o", binary, "github.com/paddockhq/paddock/cmd/paddockd").CombinedOutput()
		if buildErr != nil {
			buildErr = errors.New(string(b))
		}
	})
	require.NoError(t, buildErr, "go build ./cmd/paddockd")
	return binary
}

// startPaddockd runs the paddockd binary on loopback with the tokens
// above, serving local (its root a temporary directory) and the fake,
// until the test ends; it returns its URL.
func startPaddockd(t *testing.T) string {
	t.Helper()
	bin := paddockdBinary(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte(adminToken+"\na "+tenantAToken+"\nb "+tenantBToken+"\n"), 0o600))
	root := filepath.Join(dir, "root")
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-root", root, "-tokens-file", tokens, "-log-level", "info")
	// Only the embedded providers: no engine, no hosted credentials.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "DOCKER_HOST=unix:///nonexistent/docker.sock"}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	dieWithParent(cmd.SysProcAttr) // a test binary killed by go test's timeout runs no cleanup
	logs, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	var log syncbuf.Buffer
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			_, _ = log.Write([]byte(sc.Text() + "\n"))
			var line struct{ Message, Address string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving" {
				addr <- line.Address
			}
		}
		_, _ = io.Copy(io.Discard, logs)
		exited <- cmd.Wait()
	}()
	logged := log.String
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			require.NoError(t, err, "paddockd's stop: %s", logged())
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("paddockd did not stop on SIGINT within a minute: %s", logged())
		}
		require.NotContains(t, logged(), tenantAToken, "a token in paddockd's log")
	})
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-exited:
		t.Fatalf("paddockd exited: %v: %s", err, logged())
	case <-time.After(2 * time.Minute):
		t.Fatalf("paddockd did not listen within two minutes: %s", logged())
	}
	return ""
}

// serveFailures serves the daemon over a transport whose every exec fails
// with the kind its program names (ERROR_KIND_NOT_FOUND, ...) and the
// detail "injected": a client sees each kind of the taxonomy as paddockd
// sends it. It returns the server's URL.
func serveFailures(t *testing.T) string {
	srv, err := daemon.New(daemon.Config{Transport: failing{}})
	require.NoError(t, err)
	return serveH2C(t, srv)
}

// failing is a transport whose execs fail by their program's name.
type failing struct{}

func (failing) Capabilities(paddock.Provider) paddock.CapabilitySet { return paddock.CapabilitySet{} }

func (failing) Call(_ context.Context, q client.Request, _ time.Duration) (client.Reply, error) {
	e, ok := q.(*messages.ExecRequest)
	if !ok {
		return nil, &paddock.UnavailableError{Detail: "this server only fails execs"}
	}
	kind := messages.ErrorKind(messages.ErrorKind_value[e.GetCmd().GetPath()])
	return &messages.ExecReply{Failure: &messages.Failure{Kind: kind, Detail: "injected"}}, nil
}

func (failing) Open(context.Context, client.Request) (paddock.Stream, client.Reply, error) {
	return nil, nil, &paddock.UnavailableError{Detail: "this server only fails execs"}
}

func (failing) Upload(context.Context, *messages.WriteFileRequest, io.Reader) (client.Reply, error) {
	return nil, &paddock.UnavailableError{Detail: "this server only fails execs"}
}

func (failing) Download(context.Context, *messages.ReadFileRequest) (io.ReadCloser, client.Reply, error) {
	return nil, nil, &paddock.UnavailableError{Detail: "this server only fails execs"}
}

// serveH2C serves h on loopback over HTTP/2 without TLS (as paddockd on
// loopback) until the test ends; it returns the URL.
func serveH2C(t *testing.T, h http.Handler) string {
	hs := httptest.NewUnstartedServer(h)
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}
