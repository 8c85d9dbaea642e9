package remote_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/remote"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/heavy"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests here run nodes in separate OS processes: this test binary,
// started again in a role named by roleEnv (TestMain runs it instead of
// the tests).
const (
	roleEnv     = "PADDOCK_REMOTE_ROLE"     // emit, serve or own
	framesEnv   = "PADDOCK_REMOTE_FRAMES"   // emit: how many 32 KiB chunks
	addrEnv     = "PADDOCK_REMOTE_ADDR"     // serve, own: this node's address
	peerEnv     = "PADDOCK_REMOTE_PEER"     // own: the serving node's address
	certsEnv    = "PADDOCK_REMOTE_CERTS"    // serve, own: the directory of ca.pem, <role>.pem, <role>.key
	leaseEnv    = "PADDOCK_REMOTE_LEASE"    // serve, own: the remote lease
	providerEnv = "PADDOCK_REMOTE_PROVIDER" // serve: local or fake
	rootEnv     = "PADDOCK_REMOTE_ROOT"     // serve: the local adapter's root
	nofileEnv   = "PADDOCK_REMOTE_NOFILE"   // any role: the process's limit of open files
	chunkSize   = 32 << 10
)

// runRole runs this process as a node or the emitter; its exit code.
func runRole(role string) int {
	var err error
	if n := os.Getenv(nofileEnv); n != "" {
		var limit uint64
		if limit, err = strconv.ParseUint(n, 10, 64); err == nil {
			err = limitFiles(limit)
		}
	}
	switch {
	case err != nil:
	case role == "emit":
		err = emit(os.Stdout)
	case role == "serve":
		err = serveRole()
	case role == "own":
		err = ownRole()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, role+":", err)
		return 1
	}
	return 0
}

// chunks is the emitter's output: framesEnv chunks of 32 KiB from a
// seeded generator, so no two chunks are alike and a duplicate or a
// reordering changes the digest.
func chunks(n int, f func([]byte) error) error {
	rnd := rand.New(rand.NewPCG(22, 10000))
	b := make([]byte, chunkSize)
	for range n {
		for i := 0; i < len(b); i += 8 {
			v := rnd.Uint64()
			for j := range 8 {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		if err := f(b); err != nil {
			return err
		}
	}
	return nil
}

func emit(w io.Writer) error {
	n, err := strconv.Atoi(os.Getenv(framesEnv))
	if err != nil {
		return err
	}
	return chunks(n, func(b []byte) error { _, err := w.Write(b); return err })
}

// nodeTLS loads the mutual TLS of role from the certificates directory.
func nodeTLS(role string) (*tls.Config, error) {
	dir := os.Getenv(certsEnv)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, role+".pem"), filepath.Join(dir, role+".key"))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in ca.pem")
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}, nil
}

// roleNode starts the node of role at addrEnv, with its certificate, and
// reads the remote lease.
func roleNode(role string) (*remote.Node, time.Duration, error) {
	tlsConfig, err := nodeTLS(role)
	if err != nil {
		return nil, 0, err
	}
	lease, err := time.ParseDuration(os.Getenv(leaseEnv))
	if err != nil {
		return nil, 0, err
	}
	n, err := remote.StartNode(remote.NodeConfig{Addr: os.Getenv(addrEnv), TLS: tlsConfig})
	return n, lease, err
}

// serveRole serves a runtime over the local adapter or the fake, says
// "ready", and drops percent of every hundred of its batches after a line
// "drop <percent>" on stdin, until stdin closes; then it reports
// "batches <n> dropped <m>" and stops.
func serveRole() error {
	n, lease, err := roleNode("serve")
	if err != nil {
		return err
	}
	defer n.Stop()
	var a paddock.Adapter
	provider := paddock.Provider(os.Getenv(providerEnv))
	switch provider {
	case paddock.ProviderLocal:
		l, err := local.New(local.Config{Root: os.Getenv(rootEnv), Isolation: local.IsolationNone})
		if err != nil {
			return err
		}
		defer func() { _ = l.Close() }()
		a = l
	default:
		a = fake.New()
	}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{provider: a}, Engine: n.Engine, ReapInterval: -1, Lease: -1, RemoteLease: lease})
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = rt.Shutdown(ctx)
	}()
	var batches, dropped atomic.Int64
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var percent int
		if _, err := fmt.Sscanf(in.Text(), "drop %d", &percent); err != nil {
			return err
		}
		// Exactly percent of every 100 batches, at random places in each
		// hundred: losses wherever they fall, and always some. The first
		// hundred's fall among its first ten batches, so a stream the
		// link sends in a few dozen batches loses some too.
		var mu sync.Mutex
		rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		var doomed map[int]bool
		remote.SetFaults(n, func(*hremote.Envelope) bool {
			i := int(batches.Add(1) - 1)
			mu.Lock()
			defer mu.Unlock()
			if i%100 == 0 {
				doomed = map[int]bool{}
				places := rnd.Perm(100)
				if i == 0 {
					places = rnd.Perm(max(10, percent))
				}
				for _, j := range places[:percent] {
					doomed[j] = true
				}
			}
			if doomed[i%100] {
				dropped.Add(1)
				return true
			}
			return false
		})
		fmt.Println("dropping")
	}
	fmt.Printf("batches %d dropped %d\n", batches.Load(), dropped.Load())
	return nil
}

// ownRole drives the fake of the node at peerEnv: it spawns a command that
// prints "hello" and stays, says "spawned <session>" once the first frame
// arrived, and waits to be killed.
func ownRole() error {
	n, lease, err := roleNode("own")
	if err != nil {
		return err
	}
	ctx := context.Background()
	a, err := remote.New(remote.Config{Node: n, Peer: os.Getenv(peerEnv), Provider: paddock.ProviderFake, Lease: lease})
	if err != nil {
		return err
	}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: a}, Engine: n.Engine, ReapInterval: -1, Lease: -1})
	if err != nil {
		return err
	}
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	if err != nil {
		return err
	}
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", "out:hello", "stay"), paddock.SpawnOpts{Detachable: true})
	if err != nil {
		return err
	}
	if f, ok := <-s.(*actors.FrameStream).C(); !ok || f.GetSeq() != 1 {
		return fmt.Errorf("no first frame: %v", f)
	}
	fmt.Println("spawned", s.SessionID())
	select {} // until killed
}

// child is a node in another process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startChild starts this binary in role with env, and waits for its first
// line, which it returns.
func startChild(t *testing.T, role string, env ...string) (*child, string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), append(env, roleEnv+"="+role)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	return c, c.line(t)
}

func (c *child) line(t *testing.T) string {
	t.Helper()
	l, err := c.out.ReadString('\n')
	require.NoError(t, err, "the %s child's next line", c.cmd.Env[len(c.cmd.Env)-1])
	return strings.TrimSpace(l)
}

// kill SIGKILLs the child and waits for it.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// writeCerts writes the authority and a certificate for each role into a
// new directory, for children to load.
func writeCerts(t *testing.T, ca authority, roles ...string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
	}
	write("ca.pem", "CERTIFICATE", ca.Cert.Raw)
	for _, role := range roles {
		cert := ca.node(t)
		write(role+".pem", "CERTIFICATE", cert.Certificate[0])
		key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
		require.NoError(t, err)
		write(role+".key", "PRIVATE KEY", key)
	}
	return dir
}

// drivingRuntime starts a node in this process with an adapter for the
// serving node at peer and a runtime over it.
func drivingRuntime(t *testing.T, ca authority, peer string, provider paddock.Provider, lease time.Duration) *actors.Runtime {
	t.Helper()
	n := startNode(t, ca.mutual(ca.node(t)))
	a, err := remote.New(remote.Config{Node: n, Peer: peer, Provider: provider, Lease: lease})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	return startRuntime(t, n.Engine, provider, a)
}

// 10,000 frames of 32 KiB from a command on a node in another process
// reach their owner here complete and in order while the serving node's
// link drops 1% of its batches: the same SHA-256, one terminal frame.
// Built with the race detector it sends an eighth of them (heavy.Volume).
func TestVolumeAcrossProcessesEveryByteOnce(t *testing.T) {
	t.Parallel()
	heavy.Lock(t)
	frames, lease := heavy.Volume(10000), 6*time.Second
	ca := newAuthority(t)
	addr := freeAddr(t)
	serving, ready := startChild(t, "serve", addrEnv+"="+addr, certsEnv+"="+writeCerts(t, ca, "serve"), leaseEnv+"="+lease.String(),
		providerEnv+"=local", rootEnv+"="+t.TempDir())
	require.Equal(t, "ready", ready)
	rt := drivingRuntime(t, ca, addr, paddock.ProviderLocal, lease)
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	destroyed := false
	t.Cleanup(func() { // on a failure: no emitter outlives the test
		if !destroyed {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = rt.Adapter(h.Provider).Destroy(ctx, h)
		}
	})

	want := sha256.New()
	require.NoError(t, chunks(frames, func(b []byte) error { _, err := want.Write(b); return err }))
	exe, err := os.Executable()
	require.NoError(t, err)
	_, err = io.WriteString(serving.stdin, "drop 1\n")
	require.NoError(t, err)
	require.Equal(t, "dropping", serving.line(t))

	start := time.Now()
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.Cmd{Path: exe, Env: []paddock.EnvVar{{Name: roleEnv, Value: "emit"}, {Name: framesEnv, Value: strconv.Itoa(frames)}}},
		paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	got := sha256.New()
	var bytes, outputs int
	var terminals []messages.Frame
	timeout := time.After(5 * time.Minute)
read:
	for {
		select {
		case f, ok := <-s.(*actors.FrameStream).C():
			if !ok {
				break read
			}
			switch f := f.(type) {
			case *messages.Stdout:
				outputs++
				bytes += len(f.GetData())
				got.Write(f.GetData())
			default:
				terminals = append(terminals, f)
			}
		case <-timeout:
			t.Fatalf("after %d bytes the stream did not end", bytes)
		}
	}
	elapsed := time.Since(start)
	require.Len(t, terminals, 1, "one terminal frame")
	exit, ok := terminals[0].(*messages.Exit)
	require.True(t, ok, "an exit: %v", terminals[0])
	assert.Zero(t, exit.GetCode())
	assert.Equal(t, frames*chunkSize, bytes)
	assert.Equal(t, want.Sum(nil), got.Sum(nil), "every byte once, in order")
	require.NoError(t, rt.Adapter(h.Provider).Destroy(ctx, h))
	destroyed = true
	require.NoError(t, serving.stdin.Close())
	var batches, dropped int
	_, err = fmt.Sscanf(serving.line(t), "batches %d dropped %d", &batches, &dropped)
	require.NoError(t, err)
	t.Logf("%d MiB in %d frames in %s (%.0f MiB/s); the serving link sent %d batches and dropped %d", bytes>>20, outputs, elapsed,
		float64(bytes>>20)/elapsed.Seconds(), batches, dropped)
	assert.Positive(t, dropped, "batches were lost")
}

// Killing the owner's process mid-stream detaches its command within the
// lease on the serving node, which keeps it attachable.
func TestAcrossProcessesOwnerKilled(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	ca := newAuthority(t)
	serving := startNode(t, ca.mutual(ca.node(t)))
	p := &pair{serving: serving}
	p.serve(t, lease)
	rt := p.rt
	// The owner's certificate is the authority's too; it lives in files.
	certs := writeCerts(t, ca, "own")
	owner, line := startChild(t, "own", addrEnv+"="+freeAddr(t), peerEnv+"="+serving.Addr(), certsEnv+"="+certs, leaseEnv+"="+lease.String())
	session, ok := strings.CutPrefix(line, "spawned ")
	require.True(t, ok, "the owner said %q", line)
	require.Equal(t, 1, p.liveCommands(t), "the owner's subscription")

	owner.kill()
	killed := time.Now()
	require.Eventually(t, func() bool { return p.liveCommands(t) == 0 }, 2*lease, 10*time.Millisecond,
		"the subscription of the killed owner is detached")
	detached := time.Since(killed)
	t.Logf("detached %s after the kill (lease %s)", detached, lease)
	assert.LessOrEqual(t, detached, lease, "within the lease")

	s, err := rt.Adapter(paddock.ProviderFake).Attach(ctx, paddock.Handle{Provider: paddock.ProviderFake, Name: "box"}, session, paddock.AttachOpts{})
	require.NoError(t, err, "the command is still attachable")
	t.Cleanup(func() { _ = s.Close() })
	f := <-s.(*actors.FrameStream).C()
	out, ok := f.(*messages.Stdout)
	require.True(t, ok, "%v", f)
	assert.Equal(t, "hello", string(out.GetData()), "its output replays")
}

// Killing the serving process gives every subscription exactly one
// Error{node_lost}, within the lease.
func TestAcrossProcessesServingNodeKilled(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	ca := newAuthority(t)
	addr := freeAddr(t)
	serving, ready := startChild(t, "serve", addrEnv+"="+addr, certsEnv+"="+writeCerts(t, ca, "serve"), leaseEnv+"="+lease.String(),
		providerEnv+"=fake")
	require.Equal(t, "ready", ready)
	rt := drivingRuntime(t, ca, addr, paddock.ProviderFake, lease)
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	var streams []paddock.Stream
	for range 3 {
		s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", "out:hello", "stay"), paddock.SpawnOpts{Detachable: true})
		require.NoError(t, err)
		require.IsType(t, &messages.Stdout{}, <-s.(*actors.FrameStream).C())
		streams = append(streams, s)
	}
	serving.kill()
	killed := time.Now()
	lost := make([]time.Duration, len(streams))
	for i, s := range streams { // each proxy decides on its own; reading them in turn delays none
		_, _, terminals := collect(t, s, 2*lease)
		lost[i] = time.Since(killed)
		require.Len(t, terminals, 1, "exactly one terminal frame")
		e, ok := terminals[0].(*messages.Error)
		require.True(t, ok, "%v", terminals[0])
		assert.Equal(t, remote.ReasonNodeLost, e.GetReason())
	}
	t.Logf("node_lost after %v (lease %s)", lost, lease)
	for _, d := range lost {
		assert.LessOrEqual(t, d, lease, "within the lease")
	}
}
