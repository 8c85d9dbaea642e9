package e2btest

import (
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The resources every sandbox of the base template has, as listings and
// metrics report them.
const (
	sandboxCPUs     = 2
	sandboxMemoryMB = 512
	sandboxDiskMB   = 1024
)

// sample is one metrics sample of a sandbox, as E2B's orchestrator records
// what envd reports: taken at the server's clock, CPU in percent of the
// sandbox's CPUs, memory and disk in bytes.
type sample struct {
	at       time.Time
	cpuPct   float64
	memUsed  int64
	diskUsed int64
}

// cpuMark is where a sandbox's CPU time stood at its last sample, for the
// next one's percentage.
type cpuMark struct {
	used time.Duration
	at   time.Time // the wall clock: CPU time is real time
}

// measure takes a sample of a running sandbox: the resident memory and CPU
// of its processes (each leads a process group, which its children join)
// and the bytes of its own files. The caller holds sb.sampling.
func (sb *sandbox) measure(at time.Time) sample {
	groups := map[int]bool{}
	sb.procs.mu.Lock()
	for pid := range sb.procs.byPID {
		groups[int(pid)] = true
	}
	sb.procs.mu.Unlock()
	use := stubproc.GroupsUsage(groups)
	now := time.Now()
	smp := sample{at: at, memUsed: use.RSS, diskUsed: treeBytes(sb.space.Root())}
	if wall := now.Sub(sb.cpu.at); !sb.cpu.at.IsZero() && wall > 0 && use.CPU >= sb.cpu.used {
		smp.cpuPct = min(100, float64(use.CPU-sb.cpu.used)/float64(wall)/sandboxCPUs*100)
	}
	sb.cpu = cpuMark{used: use.CPU, at: now}
	return smp
}

// treeBytes is the size of the regular files under root.
func treeBytes(root string) int64 {
	var n int64
	_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// sandboxMetrics is GET /sandboxes/{id}/metrics: the samples between start
// and end (Unix seconds; by default the first and last sample there is),
// one per step (5 s under an hour, longer over longer ranges) holding each
// measure's maximum in it. A running sandbox is sampled as it is asked
// (its envd reports every few seconds; here the clock is manual). As on
// E2B, a sandbox that never ran here answers no samples, not 404, and a
// killed one keeps its samples.
func (s *Server) sandboxMetrics(w http.ResponseWriter, r *http.Request, _ []byte) {
	id := r.PathValue("id")
	if parts := strings.Split(id, "-"); len(parts) > 2 {
		apiError(w, http.StatusBadRequest, "Invalid sandbox ID")
		return
	} else {
		id = parts[0]
	}
	var bounds [2]*time.Time
	for i, name := range []string{"start", "end"} {
		v := r.URL.Query().Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			apiError(w, http.StatusBadRequest, `parameter "`+name+`" in query has an error: value `+v+`: an invalid integer`)
			return
		}
		t := time.Unix(n, 0).UTC()
		bounds[i] = &t
	}
	s.mu.Lock()
	sb, now := s.sandboxes[id], s.now
	running := sb != nil && sb.state == "running"
	s.mu.Unlock()
	if running {
		// Measured without the server's lock (it reads /proc and walks
		// the sandbox's files); one sample of a sandbox at a time.
		sb.sampling.Lock()
		smp := sb.measure(now)
		sb.sampling.Unlock()
		s.mu.Lock()
		if kept := s.samples[id]; len(kept) > 0 && kept[len(kept)-1].at.Equal(smp.at) {
			kept[len(kept)-1] = smp
		} else {
			s.samples[id] = append(kept, smp)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.samples[id]
	start, end := time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC()
	if len(kept) > 0 {
		start, end = kept[0].at, kept[len(kept)-1].at
	}
	if bounds[0] != nil {
		start = *bounds[0]
	}
	if bounds[1] != nil {
		end = *bounds[1]
	}
	if start.After(end) {
		apiError(w, http.StatusBadRequest, "Invalid time range for metrics")
		return
	}
	writeJSON(w, http.StatusOK, bucketed(kept, start, end, metricsStep(end.Sub(start))))
}

// metricsStep is the width of one answered point for a range, so that a
// range answers fewer than 1000 points.
func metricsStep(d time.Duration) time.Duration {
	switch {
	case d < time.Hour:
		return 5 * time.Second
	case d < 6*time.Hour:
		return 30 * time.Second
	case d < 12*time.Hour:
		return time.Minute
	case d < 24*time.Hour:
		return 2 * time.Minute
	case d < 7*24*time.Hour:
		return 5 * time.Minute
	default:
		return 15 * time.Minute
	}
}

// bucketed answers the samples in [start, end] as SandboxMetric objects,
// one per step-aligned interval that holds any, each measure its maximum
// there, oldest first.
func bucketed(samples []sample, start, end time.Time, step time.Duration) []map[string]any {
	out := []map[string]any{}
	var cur sample
	flush := func() {
		if cur.at.IsZero() {
			return
		}
		out = append(out, map[string]any{"timestamp": cur.at.Format(time.RFC3339), "timestampUnix": cur.at.Unix(),
			"cpuCount": sandboxCPUs, "cpuUsedPct": cur.cpuPct, "memUsed": cur.memUsed, "memTotal": sandboxMemoryMB << 20,
			"memCache": 0, "diskUsed": cur.diskUsed, "diskTotal": sandboxDiskMB << 20})
	}
	for _, smp := range samples {
		if smp.at.Before(start) || smp.at.After(end) {
			continue
		}
		at := smp.at.Truncate(step)
		if !at.Equal(cur.at) {
			flush()
			cur = sample{at: at}
		}
		cur.cpuPct, cur.memUsed, cur.diskUsed = max(cur.cpuPct, smp.cpuPct), max(cur.memUsed, smp.memUsed), max(cur.diskUsed, smp.diskUsed)
	}
	flush()
	return out
}
