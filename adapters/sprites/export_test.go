package sprites

import "time"

// SetKeepalive shortens a's exec socket keepalive, so a test can see a
// silent server given up on without waiting 45 s.
func SetKeepalive(a *Adapter, ping, wait time.Duration) { a.keep = keepalive{ping: ping, wait: wait} }
