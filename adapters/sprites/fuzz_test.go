package sprites

// Fuzz targets for everything that parses what the provider sends: the
// WebSocket frame decoder and each NDJSON (and listing) parser. Their seed
// corpora are in testdata/fuzz; CI runs each for 60 s.

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
)

// messages splits fuzz input into WebSocket messages: a kind byte (odd =
// text), a length byte, then that many bytes.
func messages(in []byte) (kinds []int, datas [][]byte) {
	for len(in) >= 2 {
		kind := websocket.BinaryMessage
		if in[0]%2 == 1 {
			kind = websocket.TextMessage
		}
		n := min(int(in[1]), len(in)-2)
		kinds, datas = append(kinds, kind), append(datas, in[2:2+n])
		in = in[2+n:]
	}
	return kinds, datas
}

func FuzzFrameDecoder(f *testing.F) {
	f.Add([]byte("\x01\x2a{\"type\":\"session_info\",\"session_id\":\"20\"}\x00\x04\x01out\x00\x02\x03\x2a"), false)
	f.Add([]byte("\x00\x03\x01pre\x01\x2d{\"type\":\"session_info\",\"session_id\":7,\"tty\":true}\x01\x1e{\"type\":\"exit\",\"exit_code\":3}"), false)
	f.Add([]byte("\x01\x20{\"type\":\"session_info\",\"session_id\":\"1\"}\x00\x05\x03\x2a\x00\x00\x00\x00\x01\x03"), true)
	f.Fuzz(func(t *testing.T, in []byte, tty bool) {
		d := frameDecoder{tty: tty}
		kinds, datas := messages(in)
		terminal := 0
		for i := range kinds {
			if d.heldSize > maxHeld {
				t.Fatalf("held %d bytes, over %d", d.heldSize, maxHeld)
			}
			events, info := d.decode(kinds[i], datas[i])
			if info != nil && info.ID == "" {
				t.Fatal("session info without an id")
			}
			for _, ev := range events {
				if terminal > 0 {
					t.Fatalf("an event after the terminal one: %v", ev)
				}
				switch ev.Kind {
				case paddock.EventExit:
					terminal++
					if ev.Code < 0 || ev.Code > 255 {
						t.Fatalf("exit code %d out of 0..255", ev.Code)
					}
				case paddock.EventError:
					terminal++
					if !errors.Is(ev.Err, paddock.ErrClosedBeforeExit) {
						t.Fatalf("an error event other than closed_before_exit: %v", ev.Err)
					}
					if kinds[i] != websocket.TextMessage {
						t.Fatal("only a JSON exit with a code no process has ends with an error")
					}
				case paddock.EventStdout, paddock.EventStderr:
					if len(ev.Data) == 0 {
						t.Fatal("an empty output event")
					}
					if d.tty && ev.Kind == paddock.EventStderr {
						t.Fatal("stderr on a terminal")
					}
				default:
					t.Fatalf("the decoder made a %v event", ev.Kind)
				}
			}
		}
	})
}

// lastLine is the last non-empty line of body, decoded.
func lastLine(body []byte) map[string]json.RawMessage {
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(bytes.TrimSpace(lines[len(lines)-1]), &obj)
	return obj
}

func FuzzKillConfirmed(f *testing.F) {
	f.Add([]byte(`{"type":"signal","signal":"SIGKILL","pid":20}`+"\n"+`{"type":"killed","message":"m"}`+"\n"+`{"type":"complete","exit_code":137}`), true)
	f.Add([]byte(`{"type":"signal","signal":"SIGTERM","pid":20}`+"\n"+`{"type":"exited"}`+"\n"+`{"type":"complete","exit_code":143}`+"\n"), false)
	f.Add([]byte(`{"type":"complete","exit_code":1.5}`), false)
	f.Fuzz(func(t *testing.T, body []byte, force bool) {
		if !killConfirmed(body, force) {
			return
		}
		last := lastLine(body)
		if typ, _ := stringField(last, "type"); typ != "complete" {
			t.Fatalf("confirmed without a final complete: %q", body)
		}
		if code, ok := intField(last, "exit_code"); !ok || code < 0 || code > 255 {
			t.Fatalf("confirmed with exit code %q", last["exit_code"])
		}
		if force && !bytes.Contains(body, []byte("SIGKILL")) {
			t.Fatalf("force confirmed without SIGKILL: %q", body)
		}
		if !killConfirmed(body, false) {
			t.Fatal("force evidence must satisfy graceful too")
		}
	})
}

func FuzzCheckpointStream(f *testing.F) {
	f.Add([]byte(`{"type":"info","data":"Creating checkpoint...","time":"t"}` + "\n" + `{"type":"complete","data":"Checkpoint v1 created successfully","time":"t"}` + "\n"))
	f.Add([]byte(`{"type":"info","data":"x","error":null}` + "\n" + `{"type":"complete","data":"y"}`))
	f.Add([]byte(`{"type":"complete","data":"y"}` + "\n" + `{"type":"complete","data":"y"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !checkpointStreamComplete(body) {
			return
		}
		if typ, _ := stringField(lastLine(body), "type"); typ != "complete" {
			t.Fatalf("complete without a final complete: %q", body)
		}
		if _, hasError := lastLine(body)["error"]; hasError {
			t.Fatalf("complete with an error key: %q", body)
		}
		if streamFailure(body) != "" {
			t.Fatalf("a complete stream that also failed: %q", body)
		}
	})
}

func FuzzMatchCheckpoint(f *testing.F) {
	f.Add([]byte(`[{"id":"Current"},{"id":"v1","comment":"sandbox-operation:op"},{"id":"v0"}]`), "sandbox-operation:op")
	f.Add([]byte(`[{"id":"v1","comment":"c"},{"id":"v2","comment":"c"}]`), "c")
	f.Add([]byte(`[{"id":"v1","comment":5}]`), "5")
	f.Fuzz(func(t *testing.T, body []byte, comment string) {
		id, ok := matchCheckpoint(body, comment)
		if !ok {
			return
		}
		if id == "" || len(id) > 256 || id == currentCheckpoint {
			t.Fatalf("matched id %q", id)
		}
		entries, parsed := parseCheckpoints(body)
		if !parsed {
			t.Fatal("matched in a listing that does not parse")
		}
		n := 0
		for _, e := range entries {
			if e.Comment != nil && *e.Comment == comment {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("matched with %d entries carrying the comment", n)
		}
	})
}

func FuzzRestoreOutcome(f *testing.F) {
	f.Add([]byte(`{"type":"info","data":"Restoring from checkpoint v1..."}` + "\n" + `{"type":"complete","data":"Restore from v1 complete"}` + "\n"))
	f.Add([]byte(`{"type":"info","data":"Restoring"}` + "\n" + `{"type":"error","error":"checkpoint v9 not found"}` + "\n"))
	f.Add([]byte(`{"type":"complete","error":"late failure"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := restoreOutcome(body)
		switch {
		case err == nil:
			if !bytes.Contains(body, []byte("complete")) {
				t.Fatalf("restored without a completion: %q", body)
			}
			if streamFailure(body) != "" {
				t.Fatalf("restored despite a failure: %q", body)
			}
		case paddock.KindOf(err) != paddock.KindRestoreFailed && paddock.KindOf(err) != paddock.KindUnavailable:
			t.Fatalf("restore answered %T %v", err, err)
		}
	})
}
