package spritestest

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sync"
	"time"

	"net/http"

	"github.com/gorilla/websocket"

	"github.com/paddockhq/paddock/adapters/internal/stubnotify"
)

// maxFileWatches bounds the paths one watch connection follows (each is
// an inotify instance of this machine's).
const maxFileWatches = 64

// watchFiles is the WebSocket /v1/sprites/{name}/fs/watch: the client
// subscribes ({type: subscribe, paths, recursive, workingDir}), the server
// answers subscribed with the sprite paths it watches, then an event per
// change ({type: event, path, event: create|write|remove|rename|chmod,
// timestamp, and size and isDir as the file is when sent}) until the
// client leaves. A directory watches what is in it (recursive: its
// subdirectories at the start too), a file itself. A path that cannot be
// watched answers error with the sprite's path.
func (s *Server) watchFiles(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.touched(w, r)
	if !ok {
		return
	}
	s.socket(w, r, func(conn *websocket.Conn) {
		var out sync.Mutex
		send := func(v map[string]any) bool {
			out.Lock()
			defer out.Unlock()
			_ = conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
			return conn.WriteJSON(v) == nil
		}
		gone := make(chan struct{})
		var forwarders sync.WaitGroup
		defer forwarders.Wait() // after the watches close (defers run last first)
		var watches []*stubnotify.Watch
		defer func() {
			for _, n := range watches {
				n.Close()
			}
		}()
		reading := make(chan []byte)
		go func() {
			defer close(gone)
			for {
				kind, data, err := conn.ReadMessage()
				if err != nil {
					return
				}
				if kind == websocket.TextMessage {
					select {
					case reading <- data:
					case <-s.Closing():
						return
					}
				}
			}
		}()
		defer func() { _ = conn.Close(); <-gone }()
		for {
			select {
			case data := <-reading:
				var req struct {
					Type       string   `json:"type"`
					Paths      []string `json:"paths"`
					Recursive  bool     `json:"recursive"`
					WorkingDir string   `json:"workingDir"`
				}
				if json.Unmarshal(data, &req) != nil || req.Type != "subscribe" || len(req.Paths) == 0 {
					send(map[string]any{"type": "error", "message": "expected {\"type\":\"subscribe\",\"paths\":[...]}"})
					continue
				}
				if len(watches)+len(req.Paths) > maxFileWatches {
					send(map[string]any{"type": "error", "message": fmt.Sprintf("at most %d paths are watched per connection", maxFileWatches)})
					continue
				}
				var subscribed []string
				for _, p := range req.Paths {
					p = spritePath(p, req.WorkingDir)
					host, err := sp.hostPath(p)
					var n *stubnotify.Watch
					if err == nil {
						n, err = stubnotify.Start(host, req.Recursive)
					}
					if err != nil {
						send(map[string]any{"type": "error", "message": "cannot watch " + p + ": " + fsErrorWord(err), "path": p})
						continue
					}
					watches = append(watches, n)
					subscribed = append(subscribed, p)
					forwarders.Add(1)
					go func() {
						defer forwarders.Done()
						for c := range n.Events() {
							if !send(fileEvent(sp, p, c)) {
								return
							}
						}
					}()
				}
				if len(subscribed) > 0 {
					send(map[string]any{"type": "subscribed", "paths": subscribed})
				}
			case <-gone:
				return
			case <-s.Closing():
				return
			}
		}
	})
}

// fileEvent is a change under the watched sprite path root as the watch
// sends it.
func fileEvent(sp *sprite, root string, c stubnotify.Change) map[string]any {
	p := root
	if c.Name != "" {
		p = path.Join(root, c.Name)
	}
	ev := map[string]any{"type": "event", "path": p, "event": c.Kind.String(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	if hp, err := sp.hostPath(p); err == nil {
		if info, err := os.Lstat(hp); err == nil {
			ev["size"], ev["isDir"] = info.Size(), info.IsDir()
		}
	}
	return ev
}

// fsErrorWord is an error's errno word (ENOENT, ...), as the fs routes
// answer it.
func fsErrorWord(err error) string {
	code, _ := fsCode(err)
	return code
}
