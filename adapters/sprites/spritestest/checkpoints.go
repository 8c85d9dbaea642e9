package spritestest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// checkpoint is a saved copy of a sprite's files.
type checkpoint struct {
	id      string
	comment string
	created time.Time
	dir     string
}

// entry renders the checkpoint as the listing does.
func (c *checkpoint) entry() map[string]any {
	e := map[string]any{"id": c.id, "create_time": c.created.UTC().Format(time.RFC3339Nano), "is_auto": false}
	if c.comment != "" {
		e["comment"] = c.comment
	}
	return e
}

// snapshot saves the sprite's files as the next checkpoint (v0, v1, ...);
// the caller holds s.mu.
func (s *Server) snapshot(sp *sprite, comment string) (*checkpoint, error) {
	c := &checkpoint{id: fmt.Sprintf("v%d", len(sp.checkpoints)), comment: comment, created: time.Now()}
	c.dir = filepath.Join(sp.dir, "checkpoints", c.id)
	if err := os.MkdirAll(filepath.Dir(c.dir), 0o700); err != nil {
		return nil, err
	}
	if err := stubfs.CopyTree(sp.fsDir(), c.dir); err != nil {
		return nil, err
	}
	sp.checkpoints = append(sp.checkpoints, c)
	return c, nil
}

// ndjson writes stream lines, flushing each.
type ndjson struct {
	w http.ResponseWriter
}

func startNDJSON(w http.ResponseWriter) ndjson {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	return ndjson{w}
}

func (n ndjson) line(v map[string]any) {
	b, _ := json.Marshal(v)
	_, _ = n.w.Write(append(b, '\n'))
	if f, ok := n.w.(http.Flusher); ok {
		f.Flush()
	}
}

// event is a checkpoint or restore stream line.
func event(kind, data string) map[string]any {
	return map[string]any{"type": kind, "data": data, "time": time.Now().UTC().Format(time.RFC3339Nano)}
}

// createCheckpoint is POST /v1/sprites/{name}/checkpoint: progress lines,
// then one complete; the checkpoint is listed only once the stream is done.
func (s *Server) createCheckpoint(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Comment string `json:"comment"`
	}
	if len(body) > 0 && json.Unmarshal(body, &req) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	next := fmt.Sprintf("v%d", len(sp.checkpoints))
	s.mu.Unlock()
	out := startNDJSON(w)
	out.line(event("info", "Creating checkpoint..."))
	out.line(event("info", "  ID: "+next))
	out.line(event("info", "  Restore with: sprite checkpoint restore "+next))
	s.mu.Lock()
	c, err := s.snapshot(sp, req.Comment)
	s.mu.Unlock()
	if err != nil {
		out.line(map[string]any{"type": "error", "error": "checkpoint failed: " + err.Error(), "time": time.Now().UTC().Format(time.RFC3339Nano)})
		return
	}
	out.line(event("complete", "Checkpoint "+c.id+" created successfully"))
}

// listCheckpoints is GET /v1/sprites/{name}/checkpoints: "Current" first,
// then newest first.
func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	if filter, ok := r.URL.Query()["history"]; ok {
		// A history filter answers text, one matching checkpoint a line
		// (Sprites' Go client refuses this answer).
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		for i := len(sp.checkpoints) - 1; i >= 0; i-- {
			c := sp.checkpoints[i]
			if strings.Contains(c.id, filter[0]) || strings.Contains(c.comment, filter[0]) {
				_, _ = io.WriteString(w, c.id+"\t"+c.comment+"\n")
			}
		}
		return
	}
	list := []map[string]any{{"id": "Current", "create_time": time.Now().UTC().Format(time.RFC3339Nano), "is_auto": false}}
	for i := len(sp.checkpoints) - 1; i >= 0; i-- {
		list = append(list, sp.checkpoints[i].entry())
	}
	writeJSON(w, http.StatusOK, list)
}

// getCheckpoint is GET /v1/sprites/{name}/checkpoints/{id}.
func (s *Server) getCheckpoint(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	if c := sp.checkpoint(r.PathValue("id")); c != nil {
		writeJSON(w, http.StatusOK, c.entry())
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "checkpoint not found"})
}

func (sp *sprite) checkpoint(id string) *checkpoint {
	for _, c := range sp.checkpoints {
		if c.id == id {
			return c
		}
	}
	return nil
}

// restoreCheckpoint is POST /v1/sprites/{name}/checkpoints/{id}/restore:
// every session ends and the files return to the checkpoint; the services
// that ran start again fresh, as after a cold boot. An unknown id fails
// inside the 200 stream, as Sprites does.
func (s *Server) restoreCheckpoint(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	c := sp.checkpoint(r.PathValue("id"))
	sessions, services := sp.sessionList(), sp.serviceList()
	s.mu.Unlock()
	out := startNDJSON(w)
	out.line(event("info", "Restoring from checkpoint "+r.PathValue("id")+"..."))
	if c == nil {
		out.line(map[string]any{"type": "error", "error": "checkpoint " + r.PathValue("id") + " not found",
			"time": time.Now().UTC().Format(time.RFC3339Nano)})
		return
	}
	err := s.coldBoot(sp, sessions, services, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := os.RemoveAll(sp.fsDir()); err != nil {
			return err
		}
		return stubfs.CopyTree(c.dir, sp.fsDir())
	})
	if err != nil {
		out.line(map[string]any{"type": "error", "error": "restore failed: " + err.Error(), "time": time.Now().UTC().Format(time.RFC3339Nano)})
		return
	}
	out.line(event("info", "Container components started successfully"))
	out.line(event("complete", "Restore from "+c.id+" complete"))
}

// coldBoot boots the sprite again, as a restore and a restart do: every
// session ends, the services stop, between runs (the files' change, if
// any), exec is refused briefly again, and the services that ran start
// again fresh.
func (s *Server) coldBoot(sp *sprite, sessions []*session, services []*service, between func() error) error {
	for _, ss := range sessions {
		ss.shutdown()
	}
	var ran []*service
	for _, svc := range services {
		if svc.running() {
			ran = append(ran, svc)
		}
	}
	s.stopServices(services)
	defer func() {
		for _, svc := range ran {
			s.startWithNeeds(sp, svc)
		}
	}()
	sp.space.Close() // its holder lives in the sprite's files
	if err := between(); err != nil {
		return err
	}
	s.mu.Lock()
	sp.coldStart = s.coldStart
	s.mu.Unlock()
	return nil
}
