package daytona_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/streambench"
)

// benchBytes is the stdout each side reads per iteration.
const benchBytes = 16 << 20

// BenchmarkStdout reads 16 MiB of a command's stdout three ways in each
// iteration, in turn: the journal of the same wrapped command followed
// straight from daytonatest's log WebSocket (the baseline: its frames,
// not decoded), through the adapter's stream, and through the runtime's
// FrameStream; it reports each side's MB/s of the command's output and
// the ratios to the baseline.
func BenchmarkStdout(b *testing.B) {
	srv := daytonatest.NewServer(b, fastFollow())
	a := newAdapter(b, srv)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderDaytona: a}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	h, err := a.Create(ctx, "bench", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	cmd := paddock.NewCmd("head", "-c", "16777216", "/dev/zero")
	toolbox := srv.URL() + "/toolbox/" + srv.ID("bench")

	streambench.Compare(b, func(i int) { rawFollow(b, srv, toolbox, "raw-"+itoa(i), daytona.SpawnScript(cmd, false)) }, a, rt.Adapter(h.Provider), h, cmd, benchBytes)
}

// rawFollow runs script in a new session with plain HTTP and reads its
// journal over the log WebSocket until the normal close.
func rawFollow(b *testing.B, srv *daytonatest.Server, toolbox, session, script string) {
	post := func(path string, body any) []byte {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, toolbox+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+srv.Key())
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return out
	}
	post("/process/session", map[string]string{"sessionId": session})
	var exec struct {
		CmdID string `json:"cmdId"`
	}
	if err := json.Unmarshal(post("/process/session/"+session+"/exec", map[string]any{"command": script, "runAsync": true}), &exec); err != nil {
		b.Fatal(err)
	}
	u := "ws" + strings.TrimPrefix(toolbox, "http") + "/process/session/" + session + "/command/" + exec.CmdID + "/logs?follow=true"
	conn, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + srv.Key()}, "X-Daytona-Split-Output": {"true"}})
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	defer conn.Close()
	total := 0
	for {
		_, frame, err := conn.ReadMessage()
		if err != nil {
			break
		}
		total += len(frame)
	}
	if total < benchBytes {
		b.Fatalf("the journal held %d bytes", total)
	}
	req, _ := http.NewRequest(http.MethodDelete, toolbox+"/process/session/"+session, nil)
	req.Header.Set("Authorization", "Bearer "+srv.Key())
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}
