package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/hashicorp/yamux"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/egress"
	"github.com/paddockhq/paddock/internal/tunnel"
)

// A sandbox has no network (NetworkMode none) unless it was made with
// egress=unrestricted. With the image's helpers (Config.Helpers), its one
// way out is paddock-egress, run as root inside it by an exec of the
// adapter's: it listens on 127.0.0.1:egress.Port and carries each
// connection over the exec's stdin and stdout (a yamux session) to the
// adapter, whose egress.Gate decides by name under the sandbox's policy
// and connects from outside. Commands are told of the proxy by the
// container's environment. The policy is kept in policyFile, on a volume
// of the sandbox's own that survives stops and that only root writes
// (every command runs as the non-root user, without capabilities or
// privilege gain); it is read when a relay starts. The relay lives as
// long as the adapter that started it: one process serves a sandbox's
// egress at a time, the last one to start a relay there (a newer relay
// ends the older one).

// EgressConfig is how a sandbox's proxy reaches the network; zero fields
// take the defaults. Its metrics are labelled provider="docker".
type EgressConfig = egress.Network

const (
	policyDir  = "/var/lib/paddock" // a volume of the sandbox's: root-owned, kept across stops
	policyFile = "policy.json"
	// egressMarker, in the container's environment, says the sandbox
	// goes out by the proxy.
	egressMarker = "PADDOCK_EGRESS=gate"
	egressPIDs   = stateDir + "/egress.pid"
)

// egressEnv is the container's environment for a gated sandbox.
var egressEnv = append([]string{egressMarker}, egress.ProxyEnv...)

// egressStartWait bounds a relay's start, its takeover of an older one
// included.
const egressStartWait = 30 * time.Second

// scriptEgress prints the sandbox's policy on one line ("null": none
// applied) and runs paddock-egress; a sandbox that is not gated prints
// "ungated". Exit 5: the image has no paddock-egress. Args: port, pidfile
var scriptEgress = pathPrelude + `[ "$PADDOCK_EGRESS" = gate ] || { echo ungated; exit 0; }
command -v paddock-egress >/dev/null || { echo "the image has no paddock-egress" >&2; exit 5; }
p=$(head -c 1048577 ` + policyDir + "/" + policyFile + ` 2>/dev/null | tr -d "\\n") || p=
printf '%s\n' "${p:-null}"
exec paddock-egress "$1" "$2"`

// egressLink is a running relay and the gate serving it.
type egressLink struct {
	container string       // the container it serves
	gate      *egress.Gate // nil: the sandbox is not gated (no relay)
	session   *yamux.Session
	conn      *relayConn
	done      chan struct{} // closed once the relay ended and the gate closed
}

// ended reports whether the relay is gone.
func (l *egressLink) ended() bool {
	if l.gate == nil {
		return false
	}
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// egressLinks are the relays this adapter serves, by sandbox name.
type egressLinks struct {
	mu     sync.Mutex
	links  map[string]*egressLink
	locks  map[string]*sync.Mutex // serialises each sandbox's relay starts and policy changes
	closed bool
	wg     sync.WaitGroup // the gates' and watchers' goroutines
}

// lock takes the named sandbox's egress lock.
func (e *egressLinks) lock(name string) func() {
	e.mu.Lock()
	if e.locks == nil {
		e.locks, e.links = map[string]*sync.Mutex{}, map[string]*egressLink{}
	}
	l := e.locks[name]
	if l == nil {
		l = &sync.Mutex{}
		e.locks[name] = l
	}
	e.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (e *egressLinks) get(name string) *egressLink {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.links[name]
}

// drop forgets the named sandbox's relay and ends it.
func (e *egressLinks) drop(name string) {
	e.mu.Lock()
	l := e.links[name]
	delete(e.links, name)
	e.mu.Unlock()
	if l != nil && l.gate != nil {
		_ = l.session.Close()
		<-l.done
	}
}

// close ends every relay and waits for their goroutines.
func (e *egressLinks) close() {
	e.mu.Lock()
	e.closed = true
	links := e.links
	e.links = nil
	e.mu.Unlock()
	for _, l := range links {
		if l.gate != nil {
			_ = l.session.Close()
		}
	}
	e.wg.Wait()
}

// ensureEgress makes sure the sandbox's egress is served, by this adapter:
// a relay is started unless one of ours runs there. It is a no-op for an
// adapter whose image has no helpers and for an ungated sandbox.
// container, when known, is the sandbox's container id: a relay serving
// another container (an earlier sandbox of that name) is replaced.
func (a *Adapter) ensureEgress(ctx context.Context, name, container string) error {
	if !a.cfg.Helpers {
		return nil
	}
	serving := func() bool {
		l := a.links.get(name)
		return l != nil && !l.ended() && (container == "" || l.container == container)
	}
	if serving() {
		return nil
	}
	unlock := a.links.lock(name)
	defer unlock()
	if serving() {
		return nil
	}
	a.links.drop(name)
	return a.startRelay(ctx, name)
}

// serveEgress is ensureEgress before a command starts: a sandbox this
// adapter did not create or start (its relay served by a process gone, or
// none) is served from now on. A failure is logged; the command runs (its
// network stays closed).
func (a *Adapter) serveEgress(ctx context.Context, name string) {
	if err := a.ensureEgress(ctx, name, ""); err != nil {
		a.log.Debug().Str("sandbox", name).Str("error", err.Error()).Msg("docker: serving the sandbox's egress")
	}
}

// startRelay starts paddock-egress in the sandbox and serves it with a
// gate under the policy the sandbox keeps; under the sandbox's egress
// lock.
func (a *Adapter) startRelay(ctx context.Context, name string) error {
	res, err := a.inspect(ctx, name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, egressStartWait)
	defer cancel()
	c, err := a.relay(ctx, name, execSpec{cmd: sh(scriptEgress, strconv.Itoa(egress.Port), egressPIDs), user: rootUser})
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() }) // a relay that does not start in time is ended
	br := bufio.NewReader(c)
	first, err := readLine(br, maxPolicyLine)
	if err == nil && first == "ungated\n" {
		stop()
		_ = c.Close()
		a.links.mu.Lock()
		if !a.links.closed {
			a.links.links[name] = &egressLink{container: res.Container.ID}
		}
		a.links.mu.Unlock()
		return nil
	}
	var ready string
	if err == nil {
		ready, err = readLine(br, len("ready\n"))
	}
	if !stop() || err != nil || ready != "ready\n" {
		_ = c.Close()
		return a.relayFailed(ctx, c)
	}
	allow, perr := decodePolicy(strings.TrimSuffix(first, "\n"))
	if perr != nil {
		a.log.Warn().Str("sandbox", name).Str("error", perr.Error()).Msg("docker: the sandbox's policy record is unreadable: nothing goes out")
	}
	session, err := yamux.Server(bufferedRelay{Reader: br, relayConn: c}, tunnel.Config(io.Discard))
	if err != nil {
		_ = c.Close()
		return &paddock.UnavailableError{Detail: "docker egress: " + err.Error()}
	}
	l := &egressLink{container: res.Container.ID, gate: egress.New(a.gateConfig, allow), session: session, conn: c, done: make(chan struct{})}
	a.links.mu.Lock()
	if a.links.closed {
		a.links.mu.Unlock()
		_ = session.Close()
		_ = c.Close()
		return &paddock.UnavailableError{Detail: "docker egress: the adapter is closed"}
	}
	a.links.links[name] = l
	a.links.wg.Add(2)
	a.links.mu.Unlock()
	go func() {
		defer a.links.wg.Done()
		_ = l.gate.Serve(session)
	}()
	go func() {
		defer a.links.wg.Done()
		<-session.CloseChan()
		l.gate.Close()
		_ = c.Close()
		close(l.done)
	}()
	return nil
}

// maxPolicyLine bounds a kept policy as the relay prints it.
const maxPolicyLine = 1 << 20

// readLine reads one line (with its newline) of at most max bytes.
func readLine(br *bufio.Reader, max int) (string, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return "", errors.New("docker egress: a line longer than " + strconv.Itoa(max) + " bytes")
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(line), err
		}
	}
}

// relayFailed is the error of a relay that ended (or timed out) before
// it was ready: what it said, and its exit.
func (a *Adapter) relayFailed(ctx context.Context, c *relayConn) error {
	said := short(c.Errors())
	if ctx.Err() != nil {
		return &paddock.UnavailableError{Detail: "docker egress: the sandbox's relay did not start in time " + said}
	}
	code, err := a.exitCodeWithin(context.WithoutCancel(ctx), c.x.id)
	if err == nil && code == 5 {
		return &paddock.UnavailableError{Detail: "docker egress: the image has no paddock-egress (Config.Helpers says it does)"}
	}
	return &paddock.UnavailableError{Detail: "docker egress: the sandbox's relay did not start (exit " + strconv.Itoa(code) + "): " + said}
}

// bufferedRelay is a relay read through a reader that may already hold
// its first bytes.
type bufferedRelay struct {
	io.Reader
	*relayConn
}

func (b bufferedRelay) Read(p []byte) (int, error) { return b.Reader.Read(p) }

// policyRecord is the policy as the sandbox keeps it.
type policyRecord struct {
	Allow []string `json:"allow"`
}

// decodePolicy reads a kept policy's line: "null" (none applied) is deny
// all, as is a record that does not decode (with its error).
func decodePolicy(line string) ([]string, error) {
	if line == "null" {
		return nil, nil
	}
	var r policyRecord
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return nil, err
	}
	if err := (paddock.NetworkPolicy{Allow: r.Allow}).Validate(); err != nil {
		return nil, err
	}
	return r.Allow, nil
}

// gatedEnv reports whether a container's environment says it goes out by
// the proxy.
func gatedEnv(env []string) bool {
	for _, e := range env {
		if e == egressMarker {
			return true
		}
	}
	return false
}

// keepPolicy writes the policy into the sandbox's policy volume, through
// the engine (no exec: the sandbox may be paused or stopped).
func (a *Adapter) keepPolicy(ctx context.Context, container string, allow []string) error {
	body, err := json.Marshal(policyRecord{Allow: allow})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: policyFile, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg, ModTime: time.Now()}); err != nil {
		return err
	}
	if _, err := tw.Write(body); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	_, err = a.engine.CopyToContainer(ctx, container, client.CopyToContainerOptions{DestinationPath: policyDir, Content: &buf})
	if err != nil && !errors.Is(err, context.Canceled) {
		return engineError("keep the network policy", err)
	}
	return err
}

// keptPolicy reads the policy kept in the sandbox's policy volume,
// through the engine (the sandbox may be paused or stopped): its allow
// list, and whether one was ever applied.
func (a *Adapter) keptPolicy(ctx context.Context, container string) ([]string, bool, error) {
	res, err := a.engine.CopyFromContainer(ctx, container, client.CopyFromContainerOptions{SourcePath: policyDir + "/" + policyFile})
	if cerrdefs.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, engineError("read the network policy", err)
	}
	defer res.Content.Close()
	tr := tar.NewReader(res.Content)
	if _, err := tr.Next(); err != nil {
		return nil, false, engineError("read the network policy", err)
	}
	line, err := io.ReadAll(io.LimitReader(tr, maxPolicyLine))
	if err != nil {
		return nil, false, engineError("read the network policy", err)
	}
	allow, err := decodePolicy(strings.TrimSpace(string(line)))
	if err != nil {
		return nil, false, &paddock.UnavailableError{Detail: "docker: the sandbox's policy record is unreadable: " + err.Error()}
	}
	return allow, true, nil
}
