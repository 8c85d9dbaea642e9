package main

import (
	"net/http"

	"github.com/paddockhq/paddock"
)

// The checkpoint routes: list, create, restore, fork and delete a
// sandbox's checkpoints, through the runtime.

func (c *console) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	a, h := c.sandbox(r)
	cps, err := paddock.ListCheckpoints(r.Context(), a, h)
	if cps == nil {
		cps = []paddock.Checkpoint{}
	}
	c.writeJSON(w, cps, err)
}

// checkpointRequest names a sandbox and, but for a creation, one of its
// checkpoints; a fork names the new sandbox too.
type checkpointRequest struct {
	Provider, Name, Checkpoint, Comment, Fork string
}

func (c *console) decodeCheckpoint(w http.ResponseWriter, r *http.Request) (checkpointRequest, paddock.Handle, bool) {
	var req checkpointRequest
	if err := decodeBody(w, r, &req); err != nil {
		c.writeJSON(w, nil, err)
		return req, paddock.Handle{}, false
	}
	return req, paddock.Handle{Provider: paddock.Provider(req.Provider), Name: req.Name}, true
}

func (c *console) createCheckpoint(w http.ResponseWriter, r *http.Request) {
	req, h, ok := c.decodeCheckpoint(w, r)
	if !ok {
		return
	}
	id, err := paddock.CreateCheckpoint(r.Context(), c.rt.Adapter(h.Provider), h, paddock.CheckpointOpts{Comment: req.Comment})
	c.writeJSON(w, map[string]string{"id": id}, err)
}

func (c *console) restoreCheckpoint(w http.ResponseWriter, r *http.Request) {
	req, h, ok := c.decodeCheckpoint(w, r)
	if !ok {
		return
	}
	err := paddock.RestoreCheckpoint(r.Context(), c.rt.Adapter(h.Provider), h, req.Checkpoint)
	c.writeJSON(w, map[string]bool{"ok": true}, err)
}

func (c *console) forkCheckpoint(w http.ResponseWriter, r *http.Request) {
	req, h, ok := c.decodeCheckpoint(w, r)
	if !ok {
		return
	}
	fork, err := paddock.Fork(r.Context(), c.rt.Adapter(h.Provider), h, req.Checkpoint, req.Fork, paddock.ForkOpts{})
	c.writeJSON(w, fork, err)
}

func (c *console) deleteCheckpoint(w http.ResponseWriter, r *http.Request) {
	a, h := c.sandbox(r)
	err := paddock.DeleteCheckpoint(r.Context(), a, h, r.URL.Query().Get("checkpoint"))
	c.writeJSON(w, map[string]bool{"ok": true}, err)
}
