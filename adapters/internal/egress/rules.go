// Package egress enforces a sandbox's network policy from outside the
// sandbox. A Gate is an HTTP proxy that the sandbox reaches as its only
// way out: each connection names where it goes (CONNECT host:port for
// TLS or any other TCP protocol, an absolute URL for plain HTTP), the
// Gate decides by that name against the sandbox's allow list, resolves
// an allowed name itself and connects, and answers anything else at once
// with a refusal that names the policy. IP literals are never allowed:
// the policy is a list of domains; nor is an allowed name that resolves to
// this machine or its link (loopback, link-local, unspecified). A policy
// changed live cuts the open connections to names it no longer allows.
package egress

import (
	"net/netip"
	"slices"
	"strings"
)

// Rules is a compiled allow list: exact names, and wildcards ("*.x.y")
// that match any name under x.y but not x.y itself.
type Rules struct {
	exact    map[string]bool
	suffixes []string // ".x.y" for each "*.x.y"
	empty    bool
}

// Compile makes Rules of an allow list of domain rules (as
// paddock.NetworkPolicy holds them, already validated); an empty list
// allows nothing.
func Compile(allow []string) Rules {
	r := Rules{exact: map[string]bool{}, empty: len(allow) == 0}
	for _, d := range allow {
		d = normalize(d)
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			r.suffixes = append(r.suffixes, "."+rest)
			continue
		}
		r.exact[d] = true
	}
	slices.Sort(r.suffixes)
	return r
}

// normalize is a name as rules compare it: lower case, without a final
// dot.
func normalize(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// Allows reports whether the policy lets a connection go to host (a name,
// without a port). An IP literal is never allowed.
func (r Rules) Allows(host string) bool {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return false
	}
	host = normalize(host)
	if host == "" {
		return false
	}
	if r.exact[host] {
		return true
	}
	for _, s := range r.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	return false
}

// refusal is why host is not allowed, in words for the sandbox's user.
func (r Rules) refusal(host string) string {
	addr, err := netip.ParseAddr(strings.Trim(host, "[]"))
	switch {
	case normalize(host) == "localhost" || (err == nil && addr.IsLoopback()):
		// A client that ignores NO_PROXY (busybox wget does) sends the
		// sandbox's own loopback here, where it means another machine.
		return "paddock egress policy: " + host + " is the sandbox's own loopback, which its proxy cannot reach: the client ignored NO_PROXY (busybox wget: use -Y off)"
	case r.empty:
		return "paddock egress policy: this sandbox's allow list is empty, so it may reach nothing (asked for " + host + ")"
	default:
		if err == nil {
			return "paddock egress policy: " + host + " is an IP address; the allow list names domains only"
		}
		return "paddock egress policy: " + host + " is not in this sandbox's allow list"
	}
}
