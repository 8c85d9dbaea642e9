package spritestest

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// How often the sprites watch looks for changes, and how often it says it
// is alive when nothing changed.
const (
	watchPoll      = 200 * time.Millisecond
	watchHeartbeat = 15 * time.Second
)

// watchSprites is GET /v1/sprites with Accept: application/x-ndjson (and
// ?prefix, ?max_results): a line per sprite as it is now, then a line per
// change of a sprite's status (a sprite created comes in with its status,
// one deleted goes with status "destroyed"), and heartbeats between; each
// line carries the organisation's counts. It ends when the client leaves.
func (s *Server) watchSprites(w http.ResponseWriter, r *http.Request) {
	prefix := r.URL.Query().Get("prefix")
	out := startNDJSON(w)
	seen := map[string]string{}
	first := true
	heartbeat := time.NewTicker(watchHeartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(watchPoll)
	defer poll.Stop()
	for {
		now, org := s.spriteStates(prefix)
		named := map[string]bool{} // the sprites there now and those seen before
		for n := range now {
			named[n] = true
		}
		for n := range seen {
			named[n] = true
		}
		for _, n := range slices.Sorted(maps.Keys(named)) {
			st, ok := now[n]
			if !ok {
				st.status = "destroyed"
			}
			if st.status == seen[n] && !first {
				continue
			}
			line := map[string]any{"name": n, "status": st.status, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "org": org}
			if !st.lastActive.IsZero() {
				line["last_running_at"] = st.lastActive.UTC().Format(time.RFC3339Nano)
			}
			out.line(line)
			if ok {
				seen[n] = st.status
			} else {
				delete(seen, n)
			}
		}
		first = false
		select {
		case <-poll.C:
		case <-heartbeat.C:
			_, org := s.spriteStates(prefix)
			out.line(map[string]any{"type": "heartbeat", "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "org": org})
		case <-s.Closing():
			return
		case <-r.Context().Done():
			return
		}
	}
}

// spriteState is what the watch follows of a sprite.
type spriteState struct {
	status     string
	lastActive time.Time
}

// spriteStates is every sprite's state whose name has the prefix, and the
// organisation's counts.
func (s *Server) spriteStates(prefix string) (map[string]spriteState, map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	states := map[string]spriteState{}
	counts := map[string]int{}
	now := time.Now()
	for n, sp := range s.sprites {
		st := s.statusAt(sp, now)
		counts[st]++
		if strings.HasPrefix(n, prefix) {
			states[n] = spriteState{status: st, lastActive: sp.lastActive}
		}
	}
	return states, orgCounts(counts)
}

// orgCounts is the organisation object of a listing: its name, the sprites
// by status, and its limits.
func orgCounts(counts map[string]int) map[string]any {
	return map[string]any{"name": OrgSlug, "running": counts["running"], "warm": counts["warm"],
		"cold": counts["cold"], "running_limit": 10, "warm_limit": 10}
}
