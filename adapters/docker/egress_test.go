package docker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/adapters/internal/egress/egresstest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// egressAdapter is an adapter on the tools image whose sandboxes' proxies
// reach in (the loopback internet) and count their verdicts in reg.
func egressAdapter(t *testing.T, runtime string, in *egresstest.Internet, reg prometheus.Registerer) *docker.Adapter {
	t.Helper()
	image := dockertest.Tools(t)
	return newAdapter(t, func(c *docker.Config) {
		c.Image, c.Helpers, c.Runtime = image, true, runtime
		if runtime == docker.RuntimeRunsc {
			c.MaxProcesses = 1024
		}
		c.Egress = docker.EgressConfig{Resolve: in.Resolve, Dial: in.Dial, Registerer: reg}
	})
}

// A sandbox goes out only by its proxy, under its network policy, on runc
// and under gVisor: none applied denies everything; an applied list lets
// its names through (HTTPS and HTTP, git over HTTPS), a wildcard its
// subdomains and not its apex; an IP literal, a connection that skips the
// proxy, UDP and DNS fail, root's included; a live change cuts an open
// download; an empty list denies all again; the policy outlives a stop.
// A sandbox with a network of its own takes no policy.
func TestEgressFollowsThePolicy(t *testing.T) {
	t.Parallel()
	for _, runtime := range []string{docker.RuntimeRunc, docker.RuntimeRunsc} {
		for _, via := range []string{"raw", "runtime"} {
			t.Run(runtime+"/"+via, func(t *testing.T) {
				t.Parallel()
				egressFollowsThePolicy(t, runtime, via == "runtime")
			})
		}
	}
}

// egressFollowsThePolicy is TestEgressFollowsThePolicy under one runtime,
// every operation on the adapter itself or through a Paddock runtime.
func egressFollowsThePolicy(t *testing.T, runtime string, throughRuntime bool) {
	in := egresstest.New(t)
	reg := prometheus.NewRegistry()
	raw := egressAdapter(t, runtime, in, reg)
	require.True(t, raw.Capabilities().Has(paddock.CapNetworkPolicy))
	var a paddock.Adapter = raw
	if throughRuntime {
		a = startRuntime(t, raw).Adapter(paddock.ProviderDocker)
	}
	ctx := ctxFor(t, 5*time.Minute)
	name := "net-" + runtime + map[bool]string{true: "-rt", false: ""}[throughRuntime]
	var h paddock.Handle
	if runtime == docker.RuntimeRunsc {
		h = runscSandbox(t, raw, name)
	} else {
		h = sandbox(t, raw, name, nil)
	}
	run := func(ops paddock.Adapter, script string) (string, int) {
		res, err := ops.Exec(ctxFor(t, time.Minute), h, paddock.NewCmd("sh", "-c", script), paddock.ExecOpts{StderrToStdout: true})
		require.NoError(t, err)
		return string(res.Stdout), res.ExitCode
	}
	require.NoError(t, a.WriteFile(ctx, h, "/workspace/ca.pem", 0o644, strings.NewReader(string(in.CAPEM))))
	curl := func(args string) (string, int) {
		return run(a, "curl -sS --max-time 60 --cacert /workspace/ca.pem "+args+" 2>&1")
	}

	out, code := curl("https://pkg.test/")
	assert.Equal(t, 56, code, "no policy yet: denied: %s", out)
	assert.Contains(t, out, "403")

	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{Allow: egresstest.Policy}))
	egresstest.CheckCurl(t, curl)
	out, code = run(a, "git -c http.sslCAInfo=/workspace/ca.pem clone -q --template= https://git.test"+in.RepoPath+" /workspace/repo 2>&1 && cat /workspace/repo/README")
	assert.Equal(t, 0, code, out)
	assert.Equal(t, egresstest.RepoContent, out)

	for _, tc := range []struct{ what, script string }{
		{"TCP past the proxy", `curl -sS --noproxy '*' --max-time 60 http://192.0.2.10/`},
		{"UDP", `echo x | nc -u -w 5 192.0.2.1 53`},
		{"DNS", `nslookup -timeout=5 paddock-egress-test.example 192.0.2.53`},
		{"IPv6", `curl -sS --noproxy '*' --max-time 60 'http://[2001:db8::1]/'`},
	} {
		out, code := run(a, tc.script+" 2>&1")
		assert.NotEqual(t, 0, code, "%s: %s", tc.what, out)
	}
	// The sandbox's user cannot rewrite the kept policy; root in the
	// sandbox (only the engine can start one) has no route out either,
	// and cannot make one.
	out, code = run(a, `echo '{"allow":["denied.test"]}' > /var/lib/paddock/policy.json`)
	assert.NotEqual(t, 0, code, "the kept policy is root's: %s", out)
	for _, script := range []string{`curl -sS --noproxy '*' --max-time 60 http://192.0.2.10/`, `ip route add default dev lo`, `ip link add x type dummy`} {
		out, code := dockertest.ExecAsRoot(t, docker.ContainerName(h.Name), script)
		assert.NotEqual(t, 0, code, "as root: %s: %s", script, out)
	}

	// A download under way is cut when its name stops being
	// allowed.
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "curl -sS --cacert /workspace/ca.pem --limit-rate 256k -o /workspace/blob https://pkg.test/blob; echo exit $?"), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer st.Close()
	require.Eventually(t, func() bool {
		out, _ := run(a, "stat -c %s /workspace/blob 2>/dev/null || echo 0")
		return strings.TrimSpace(out) != "0"
	}, time.Minute, 50*time.Millisecond, "the download is under way")
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{Allow: []string{"git.test"}}))
	var said strings.Builder
	for {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		said.Write(ev.Data)
		if ev.Kind.Terminal() {
			break
		}
	}
	assert.Contains(t, said.String(), "exit ", "the download ended")
	assert.NotContains(t, said.String(), "exit 0", "the download was cut")

	// The policy is kept with the sandbox: a stopped and started
	// sandbox, served by another adapter, keeps it.
	require.NoError(t, docker.StopForTest(ctx, raw, h.Name))
	b := egressAdapter(t, runtime, in, reg)
	_, err = b.Resume(ctx, h)
	require.NoError(t, err)
	require.NoError(t, b.WriteFile(ctx, h, "/workspace/ca.pem", 0o644, strings.NewReader(string(in.CAPEM))), "the scratch space was lost with the stop")
	out, _ = run(b, "curl -sS --max-time 60 --cacert /workspace/ca.pem https://git.test/ 2>&1; echo; curl -sS --max-time 60 --cacert /workspace/ca.pem https://pkg.test/ 2>&1")
	assert.Contains(t, out, "hello from git.test", "the kept list: %s", out)
	assert.Contains(t, out, "403", "the kept list denies the rest: %s", out)

	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, b, h, paddock.NetworkPolicy{}))
	out, code = run(b, "curl -sS --max-time 60 --cacert /workspace/ca.pem https://git.test/ 2>&1")
	assert.Equal(t, 56, code, "an empty list denies everything: %s", out)

	verdicts := egresstest.Verdicts(t, reg, "docker")
	assert.GreaterOrEqual(t, verdicts["allowed"], 6.0, "curl's, git's, the download and the kept list's: %v", verdicts)
	assert.GreaterOrEqual(t, verdicts["denied"], 7.0, "%v", verdicts)
}

// A sandbox made with egress=unrestricted has a network of its own and
// refuses a policy; an adapter whose image lacks the helpers offers none.
func TestEgressIsRefusedWhereItCannotBeEnforced(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 2*time.Minute)
	a := newAdapter(t)
	open := sandbox(t, a, "net-open", map[string]string{"egress": "unrestricted"})
	err := a.ApplyNetworkPolicy(ctx, open, paddock.NetworkPolicy{Allow: []string{"pkg.test"}})
	var invalid *paddock.InvalidError
	require.ErrorAs(t, err, &invalid)
	assert.Contains(t, invalid.Detail, "egress=unrestricted")

	without := newAdapter(t, func(c *docker.Config) { c.Helpers = false })
	assert.False(t, without.Capabilities().Has(paddock.CapNetworkPolicy))
	err = paddock.ApplyNetworkPolicy(ctx, without, without.BuildHandle("x"), paddock.NetworkPolicy{})
	require.ErrorIs(t, err, paddock.ErrNotSupported)

	err = a.ApplyNetworkPolicy(ctx, a.BuildHandle("net-absent"), paddock.NetworkPolicy{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
	err = a.ApplyNetworkPolicy(ctx, open, paddock.NetworkPolicy{Allow: []string{"http://x"}})
	require.ErrorAs(t, err, &invalid)
}

// A fork goes out under the policy its source keeps: a checkpoint holds
// files only, and the fork takes the source's policy beside them.
func TestAForkTakesItsSourcesPolicy(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	a := egressAdapter(t, docker.RuntimeRunc, in, prometheus.NewRegistry())
	ctx := ctxFor(t, 5*time.Minute)
	h := sandbox(t, a, "net-fork-source", nil)
	require.NoError(t, a.WriteFile(ctx, h, "/workspace/ca.pem", 0o644, strings.NewReader(string(in.CAPEM))))
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{Allow: egresstest.Policy}))
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	fork, err := paddock.Fork(ctx, a, h, cp, "net-fork", paddock.ForkOpts{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Destroy(ctxFor(t, time.Minute), fork)) })
	egresstest.CheckCurl(t, func(args string) (string, int) {
		return execOut(t, a, fork, "sh", "-c", "curl -sS --max-time 60 --cacert /workspace/ca.pem "+args+" 2>&1")
	})
}
