package paddock

import "strings"

// NetworkPolicy is a sandbox's complete egress allow list. An empty (or nil)
// Allow means deny all egress, never "no policy". Entries are domain rules: a
// host name such as "api.example.com", or a wildcard such as "*.github.com".
type NetworkPolicy struct {
	Allow []string `json:"allow"`
}

// Validate reports an *InvalidError with detail network_policy naming the
// first entry that is not a domain rule.
func (p NetworkPolicy) Validate() error {
	for _, d := range p.Allow {
		if !validDomainRule(d) {
			return &InvalidError{Detail: DetailNetworkPolicy + ": not a domain rule: " + d}
		}
	}
	return nil
}

// validDomainRule reports whether d is a host name of labels [A-Za-z0-9-]
// (1..63 bytes, no leading or trailing '-'), at most 253 bytes, optionally
// preceded by "*.".
func validDomainRule(d string) bool {
	d = strings.TrimPrefix(d, "*.")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
