package egresstest

import (
	"strings"

	"github.com/stretchr/testify/assert"
)

// Policy is the allow list the adapters' egress tests apply: two names
// and the subdomains of a third (not its apex).
var Policy = []string{"pkg.test", "*.api.pkg.test", "git.test"}

// TB is what the checks need of a test.
type TB interface {
	assert.TestingT
	Helper()
}

// CheckCurl checks, under Policy, what curl in a sandbox reaches: curl
// runs `curl -sS ... <args> 2>&1` there and returns its output and exit
// code. The listed names answer over HTTPS and HTTP, a subdomain of the
// wildcard does; its apex, a name not listed, an IP literal and a plain
// HTTP name not listed are refused by the proxy (403).
func CheckCurl(t TB, curl func(args string) (string, int)) {
	t.Helper()
	for _, u := range []string{"https://pkg.test/", "http://pkg.test/", "https://deep.api.pkg.test/"} {
		out, code := curl(u)
		assert.Equal(t, 0, code, "%s: %s", u, out)
		assert.True(t, strings.HasPrefix(out, "hello from "), "%s: %s", u, out)
	}
	for _, tc := range []struct{ what, args string }{
		{"the wildcard's apex", "https://api.pkg.test/"},
		{"a name not listed", "https://denied.test/"},
		{"an IP literal", "https://192.0.2.10/"},
		{"a plain HTTP name not listed", "-f http://other.test/"},
	} {
		out, code := curl(tc.args)
		assert.NotEqual(t, 0, code, tc.what)
		assert.Contains(t, out, "403", "%s: %s", tc.what, out)
	}
}
