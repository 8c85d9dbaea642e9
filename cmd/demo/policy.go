package main

import (
	"net/http"
	"sync"

	"github.com/paddockhq/paddock"
)

// policies are the network policies this console applied, by sandbox. The
// contract applies a policy but has no way to read one back, so the
// console shows the list it set (and says when it set none).
type policies struct {
	mu sync.Mutex
	m  map[paddock.Handle][]string
}

func (p *policies) set(h paddock.Handle, allow []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[paddock.Handle][]string{}
	}
	p.m[h] = allow
}

func (p *policies) get(h paddock.Handle) ([]string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	allow, ok := p.m[h]
	return allow, ok
}

func (p *policies) forget(h paddock.Handle) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, h)
}

// policyView is a sandbox's policy as the console shows it: Applied says
// whether this console applied one (Allow is then that list).
type policyView struct {
	Applied bool     `json:"applied"`
	Allow   []string `json:"allow"`
}

func (c *console) getPolicy(w http.ResponseWriter, r *http.Request) {
	_, h := c.sandbox(r)
	allow, ok := c.policies.get(h)
	if allow == nil {
		allow = []string{}
	}
	c.writeJSON(w, policyView{Applied: ok, Allow: allow}, nil)
}

// putPolicy applies the sandbox's complete allow list through the
// runtime: an empty list denies all egress.
func (c *console) putPolicy(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Provider, Name string
		Allow          []string
	}
	if err := decodeBody(w, r, &req); err != nil {
		c.writeJSON(w, nil, err)
		return
	}
	h := paddock.Handle{Provider: paddock.Provider(req.Provider), Name: req.Name}
	allow := append([]string{}, req.Allow...)
	if err := paddock.ApplyNetworkPolicy(r.Context(), c.rt.Adapter(h.Provider), h, paddock.NetworkPolicy{Allow: allow}); err != nil {
		c.writeJSON(w, nil, err)
		return
	}
	c.policies.set(h, allow)
	c.writeJSON(w, policyView{Applied: true, Allow: allow}, nil)
}
