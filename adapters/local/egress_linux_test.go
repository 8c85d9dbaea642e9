package local_test

import (
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/egress/egresstest"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An isolated sandbox goes out only by its proxy, under its network
// policy: none applied denies everything; an applied list lets its names
// through (HTTPS and HTTP, git over HTTPS), a wildcard its subdomains and
// not its apex; an IP literal, a connection that skips the proxy, UDP and
// DNS fail at once, root's included; a live change cuts an open download;
// an empty list denies all again. A sandbox with the host's network takes
// no policy.
func TestEgressFollowsThePolicy(t *testing.T) {
	t.Parallel()
	if _, ok := localtest.Modes(t)["namespaces"]; !ok {
		t.Skip("egress is enforced in isolated sandboxes only, and isolation is unavailable here")
	}
	adaptertest.NeedsTools(t, "curl", "git", "bash")
	for _, via := range []string{"raw", "runtime"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			egressFollowsThePolicy(t, via == "runtime")
		})
	}
}

// egressFollowsThePolicy is TestEgressFollowsThePolicy with every
// operation on the adapter itself or through a Paddock runtime.
func egressFollowsThePolicy(t *testing.T, throughRuntime bool) {
	in := egresstest.New(t)
	reg := prometheus.NewRegistry()
	raw := newLocal(t, withIsolation(local.IsolationNamespaces), func(c *local.Config) {
		c.Egress = local.EgressConfig{Resolve: in.Resolve, Dial: in.Dial, Registerer: reg}
	})
	require.True(t, raw.Capabilities().Has(paddock.CapNetworkPolicy))
	var a paddock.Adapter = raw
	if throughRuntime {
		a = startRuntime(t, raw).Adapter(paddock.ProviderLocal)
	}
	h := box(t, raw, "net")
	ca := raw.HostPath(h, "/ca.pem")
	require.NoError(t, os.WriteFile(ca, in.CAPEM, 0o644))
	curl := func(args string) (string, int) {
		return execOut(t, a, h, "curl -sS --max-time 60 --cacert "+ca+" "+args+" 2>&1")
	}

	out, code := curl("https://pkg.test/")
	assert.Equal(t, 56, code, "no policy yet: denied: %s", out)
	assert.Contains(t, out, "403")

	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{Allow: egresstest.Policy}))
	egresstest.CheckCurl(t, curl)
	out, code = execOut(t, a, h, "GIT_SSL_CAINFO="+ca+" HOME=/tmp git clone -q https://git.test"+in.RepoPath+" "+raw.HostPath(h, "/repo")+" 2>&1 && cat "+raw.HostPath(h, "/repo/README"))
	assert.Equal(t, 0, code, out)
	assert.Equal(t, egresstest.RepoContent, out)

	for _, tc := range []struct{ what, script string }{
		{"TCP past the proxy, as root", `[ "$(id -u)" = 0 ] && curl -sS --noproxy '*' --max-time 60 http://192.0.2.10/`},
		{"UDP", `bash -c 'echo x > /dev/udp/192.0.2.1/53'`},
		{"DNS", `getent hosts paddock-egress-test.example`},
		{"IPv6", `curl -sS --noproxy '*' --max-time 60 'http://[2001:db8::1]/'`},
	} {
		out, code := execOut(t, a, h, tc.script+" 2>&1")
		assert.NotEqual(t, 0, code, "%s: %s", tc.what, out)
	}

	// A download under way is cut when its name stops being allowed.
	blob := raw.HostPath(h, "/blob")
	st := sh(t, a, h, "curl -sS --cacert "+ca+" --limit-rate 256k -o "+blob+" https://pkg.test/blob; echo exit $?", paddock.SpawnOpts{})
	require.Eventually(t, func() bool {
		info, err := os.Stat(blob)
		return err == nil && info.Size() > 0
	}, time.Minute, 20*time.Millisecond, "the download is under way")
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{Allow: []string{"git.test"}}))
	evs := events(t, st, time.Minute)
	assert.NotContains(t, stdout(evs), "exit 0", "the download was cut")

	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{}))
	out, code = curl("https://git.test/")
	assert.Equal(t, 56, code, "an empty list denies everything: %s", out)

	verdicts := egresstest.Verdicts(t, reg, "local")
	assert.GreaterOrEqual(t, verdicts["allowed"], 5.0, "curl's three, git's and the download: %v", verdicts)
	assert.GreaterOrEqual(t, verdicts["denied"], 6.0, "%v", verdicts)

	open := box(t, raw, "open", "egress", "unrestricted")
	err := paddock.ApplyNetworkPolicy(ctx, a, open, paddock.NetworkPolicy{Allow: []string{"pkg.test"}})
	var invalid *paddock.InvalidError
	require.ErrorAs(t, err, &invalid)
	assert.Contains(t, invalid.Detail, "egress=unrestricted")
}
