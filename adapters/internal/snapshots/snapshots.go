// Package snapshots names the checkpoints an adapter keeps as its
// provider's snapshots, and tells which to reap. A snapshot is named
// paddock-<key>-<stamp>-<random>: key a hash of the sandbox's name (any
// Paddock name becomes lower-case letters and digits), stamp its creation
// time, so a sandbox's snapshots are found by name alone, never taken for
// another's, and their times read back from their names.
package snapshots

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Prefix begins the name of every snapshot named here.
const Prefix = "paddock-"

// Key is the beginning of the names of sandbox name's snapshots.
func Key(name string) string {
	sum := sha256.Sum256([]byte(name))
	return Prefix + hex.EncodeToString(sum[:8]) + "-"
}

// keyLen is the length of every Key.
var keyLen = len(Key(""))

// New is a fresh snapshot name for sandbox name, made at now.
func New(name string, now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return Key(name) + strconv.FormatInt(now.UnixMilli(), 36) + "-" + hex.EncodeToString(b[:])
}

// Owns reports whether snapshot is one of sandbox name's.
func Owns(name, snapshot string) bool { return strings.HasPrefix(snapshot, Key(name)) }

// KeyOf is the key of a snapshot named here, or "" for another name.
func KeyOf(snapshot string) string {
	if len(snapshot) < keyLen || !strings.HasPrefix(snapshot, Prefix) {
		return ""
	}
	return snapshot[:keyLen]
}

// Time is when the snapshot was made, as its name says (zero when it does
// not).
func Time(snapshot string) time.Time {
	if KeyOf(snapshot) == "" {
		return time.Time{}
	}
	stamp, _, ok := strings.Cut(snapshot[keyLen:], "-")
	ms, err := strconv.ParseInt(stamp, 36, 64)
	if !ok || err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Gone remembers since when each snapshot's sandbox has been found gone,
// in this process (a new one starts the clock again: it keeps longer,
// never shorter). The zero Gone is ready; it is safe for concurrent use.
type Gone struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// Doomed notes, at now, which of the snapshots (by name) have a live
// sandbox (live answers by Key) and answers those whose sandbox has been
// gone for longer than retention (never, for a negative retention).
func (g *Gone) Doomed(names []string, live func(key string) bool, retention time.Duration, now time.Time) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.since == nil {
		g.since = map[string]time.Time{}
	}
	var doomed []string
	for _, n := range names {
		key := KeyOf(n)
		switch since, seen := g.since[n]; {
		case key == "" || live(key):
			delete(g.since, n)
		case !seen:
			g.since[n] = now
		case retention >= 0 && now.Sub(since) > retention:
			doomed = append(doomed, n)
		}
	}
	return doomed
}

// Forget drops what is remembered of snapshot (it was removed).
func (g *Gone) Forget(snapshot string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.since, snapshot)
}
