package fake

import "github.com/paddockhq/paddock"

// Test controls: ways for tests to see and reset the fake world.

// Reset stops every command (each live subscriber gets one
// Error{closed_before_exit}) and empties the world. Instance and session
// counters keep counting, so ids are never reused.
func (a *Adapter) Reset() {
	a.mu.Lock()
	old := a.sandboxes
	a.sandboxes = map[string]*sandbox{}
	a.previews = map[string]preview{}
	a.mu.Unlock()
	for _, sb := range old {
		stopAll(sb)
	}
}

// Policy returns the last policy applied to the sandbox, or nil.
func (a *Adapter) Policy(name string) *paddock.NetworkPolicy {
	a.mu.Lock()
	defer a.mu.Unlock()
	sb, ok := a.sandboxes[name]
	if !ok || sb.policy == nil {
		return nil
	}
	p := *sb.policy
	if p.Allow != nil {
		p.Allow = append([]string{}, p.Allow...)
	}
	return &p
}

// File returns a copy of a stored file's bytes, or nil and false.
func (a *Adapter) File(name, path string) ([]byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sb, ok := a.sandboxes[name]
	if !ok {
		return nil, false
	}
	f, ok := sb.files[path]
	if !ok {
		return nil, false
	}
	return append([]byte{}, f.data...), true
}

// SessionLive reports whether the session's command still runs.
func (a *Adapter) SessionLive(name, sessionID string) bool {
	a.mu.Lock()
	sb, ok := a.sandboxes[name]
	var s *session
	if ok {
		s = sb.sessions[sessionID]
	}
	a.mu.Unlock()
	return s != nil && s.live()
}
