package spritestest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// Asked for NDJSON, the sprite listing watches: a line per sprite (by
// prefix) as it is, then a line per change: a sprite created, its status
// changed, deleted ("destroyed"); each with the organisation's counts.
func TestWatchSprites(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("w-one")
	srv.AddSprite("other")
	ctx, cancel := context.WithTimeout(context.Background(), hangBound) // a watch that never sends fails the test
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/v1/sprites?prefix=w-", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	req.Header.Set("Accept", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
	lines := bufio.NewScanner(res.Body)
	type org struct {
		Name string `json:"name"`
		Cold *int   `json:"cold"`
	}
	type line struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Org    org    `json:"org"`
	}
	next := func() line {
		t.Helper()
		for lines.Scan() {
			var l line
			require.NoError(t, json.Unmarshal(lines.Bytes(), &l))
			require.Equal(t, spritestest.OrgSlug, l.Org.Name)
			require.NotNil(t, l.Org.Cold)
			if l.Type != "heartbeat" {
				l.Org = org{} // checked above; the counts change with the sprites
				return l
			}
		}
		t.Fatal("the watch ended")
		return line{}
	}
	require.Equal(t, line{Name: "w-one", Status: "cold"}, next(), "the sprites by prefix as they are")

	status, body, _ := call(t, srv, http.MethodPost, "/v1/sprites", `{"name":"w-two"}`)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, line{Name: "w-two", Status: "cold"}, next())
	srv.SetStatus("w-one", "running")
	require.Equal(t, line{Name: "w-one", Status: "running"}, next())
	status, _, _ = call(t, srv, http.MethodDelete, "/v1/sprites/w-two", "")
	require.Equal(t, http.StatusNoContent, status)
	require.Equal(t, line{Name: "w-two", Status: "destroyed"}, next())
}

// The ports watch lists what the sprite's processes listen on, then each
// port opened and closed; this machine's other listeners are not listed.
func TestWatchPorts(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	outside, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer outside.Close()
	conn := dial(t, srv, "/v1/sprites/box/ports/watch")
	defer conn.Close()
	type event struct {
		Type    string  `json:"type"`
		Port    int     `json:"port"`
		Address string  `json:"address"`
		PID     int     `json:"pid"`
		Ports   []event `json:"ports"`
	}
	var list event
	require.NoError(t, conn.ReadJSON(&list))
	require.Equal(t, "port_list", list.Type)
	for _, p := range list.Ports {
		require.NotEqual(t, outside.Addr().(*net.TCPAddr).Port, p.Port, "this machine's listener is not the sprite's")
	}
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := probe.Addr().(*net.TCPAddr).Port
	require.NoError(t, probe.Close())
	node := "require('net').createServer().listen(" + strconv.Itoa(port) + ", '127.0.0.1'); setInterval(() => {}, 1000)"
	code, _ := streamUntil(t, srv, http.MethodPut, "/v1/sprites/box/services/listener?duration=0s", `{"cmd":"node","args":["-e",`+strconv.Quote(node)+`]}`, nil)
	require.Equal(t, http.StatusOK, code)
	pid := getService(t, srv, "listener").State.PID
	var ev event
	for ev.Type != "port_opened" || ev.Port != port {
		require.NoError(t, conn.ReadJSON(&ev))
	}
	require.Equal(t, event{Type: "port_opened", Port: port, Address: "127.0.0.1", PID: pid}, ev)
	code, _ = streamUntil(t, srv, http.MethodPost, "/v1/sprites/box/services/listener/stop", "", nil)
	require.Equal(t, http.StatusOK, code)
	for ev.Type != "port_closed" || ev.Port != port {
		require.NoError(t, conn.ReadJSON(&ev))
	}
}

// The filesystem watch answers subscribed with the sprite's paths, then an
// event per change under a directory (or of a single file), by the
// sprite's path, with fsnotify's kinds; an absent path is an error.
func TestWatchFiles(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	writeFiles(t, srv, "/home/sprite/w/keep", "/home/sprite/alone")
	conn := dial(t, srv, "/v1/sprites/box/fs/watch")
	defer conn.Close()
	type event struct {
		Type    string   `json:"type"`
		Paths   []string `json:"paths"`
		Path    string   `json:"path"`
		Event   string   `json:"event"`
		Size    *int64   `json:"size"`
		IsDir   *bool    `json:"isDir"`
		Message string   `json:"message"`
	}
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "subscribe", "paths": []string{"w", "/home/sprite/alone"}, "workingDir": "/home/sprite", "recursive": true}))
	var ev event
	require.NoError(t, conn.ReadJSON(&ev))
	require.Equal(t, event{Type: "subscribed", Paths: []string{"/home/sprite/w", "/home/sprite/alone"}}, ev)
	until := func(path, kind string) event {
		t.Helper()
		for {
			var ev event
			require.NoError(t, conn.ReadJSON(&ev))
			if ev.Path == path && ev.Event == kind {
				return ev
			}
		}
	}
	runIn(t, srv, "mkdir", "/home/sprite/w/sub")
	got := until("/home/sprite/w/sub", "create")
	require.True(t, *got.IsDir)
	runIn(t, srv, "sh", "-c", "printf abc > /home/sprite/w/keep")
	got = until("/home/sprite/w/keep", "write")
	require.False(t, *got.IsDir)
	require.NotNil(t, got.Size)
	runIn(t, srv, "chmod", "600", "/home/sprite/alone")
	until("/home/sprite/alone", "chmod")
	runIn(t, srv, "mv", "/home/sprite/w/keep", "/home/sprite/w/moved")
	until("/home/sprite/w/keep", "rename")
	until("/home/sprite/w/moved", "create")
	runIn(t, srv, "rm", "/home/sprite/w/moved")
	got = until("/home/sprite/w/moved", "remove")
	require.Nil(t, got.Size, "a removed file has no size")

	require.NoError(t, conn.WriteJSON(map[string]any{"type": "subscribe", "paths": []string{"/home/sprite/absent"}}))
	for ev = (event{}); ev.Type != "error"; {
		require.NoError(t, conn.ReadJSON(&ev))
	}
	require.Contains(t, ev.Message, "/home/sprite/absent")
	require.Contains(t, ev.Message, "ENOENT")

	many := make([]string, 65)
	for i := range many {
		many[i] = "/home/sprite/w"
	}
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "subscribe", "paths": many}))
	for ev = (event{}); ev.Type != "error"; {
		require.NoError(t, conn.ReadJSON(&ev))
	}
	require.Contains(t, ev.Message, "at most 64 paths", "a connection's watches are bounded")
}
