package sprites

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/paddockhq/paddock"
)

// errNotObject is an NDJSON line that is not a JSON object.
var errNotObject = errors.New("an NDJSON line is not a JSON object")

// ndjsonObjects decodes every non-empty line of body as a JSON object, its
// values kept raw (numbers exact).
func ndjsonObjects(body []byte) ([]map[string]json.RawMessage, error) {
	var out []map[string]json.RawMessage
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
			return nil, errNotObject
		}
		out = append(out, obj)
	}
	return out, nil
}

// stringField reads a string field; ok is false when it is absent or not a
// string.
func stringField(obj map[string]json.RawMessage, key string) (string, bool) {
	raw, present := obj[key]
	if !present {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// intField reads an integer field written as a plain JSON integer (not a
// string, not a fraction, not an exponent).
func intField(obj map[string]json.RawMessage, key string) (int64, bool) {
	raw, present := obj[key]
	if !present {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return n, err == nil
}

// killConfirmed judges a kill answer's NDJSON body
// (docs/contract.md#bounded-sprites):
// the last event is complete with an integer exit code 0..255, every earlier
// event is signal, timeout, exited or killed, at least one is exited or
// killed, and in force mode a signal event names SIGKILL with a positive
// pid. Anything else leaves termination unconfirmed.
func killConfirmed(body []byte, force bool) bool {
	events, err := ndjsonObjects(body)
	if err != nil || len(events) == 0 {
		return false
	}
	last := events[len(events)-1]
	if t, _ := stringField(last, "type"); t != "complete" {
		return false
	}
	if code, ok := intField(last, "exit_code"); !ok || code < 0 || code > 255 {
		return false
	}
	ended, sigkill := false, false
	for _, ev := range events[:len(events)-1] {
		t, _ := stringField(ev, "type")
		switch t {
		case "exited", "killed":
			ended = true
		case "timeout":
		case "signal":
			sig, _ := stringField(ev, "signal")
			pid, ok := intField(ev, "pid")
			sigkill = sigkill || (sig == "SIGKILL" && ok && pid > 0)
		default:
			return false // error, unknown, or a second complete
		}
	}
	return ended && (!force || sigkill)
}

// checkpointStreamComplete judges a checkpoint-creation NDJSON body
// strictly: every line an object of type info or complete with a string
// data, no line with an error key at all (even null), and exactly one
// complete, as the last line.
func checkpointStreamComplete(body []byte) bool {
	events, err := ndjsonObjects(body)
	if err != nil || len(events) == 0 {
		return false
	}
	for i, ev := range events {
		if _, hasError := ev["error"]; hasError {
			return false
		}
		if _, ok := stringField(ev, "data"); !ok {
			return false
		}
		t, _ := stringField(ev, "type")
		switch {
		case t == "complete" && i == len(events)-1:
		case t == "info" && i < len(events)-1:
		default:
			return false
		}
	}
	return true
}

// checkpointEntry is one element of a checkpoint listing.
type checkpointEntry struct {
	ID         string  `json:"id"`
	Comment    *string `json:"comment"`
	CreateTime string  `json:"create_time"`
}

// currentCheckpoint is the listing's synthetic entry for the live
// filesystem.
const currentCheckpoint = "Current"

// parseCheckpoints decodes a listing strictly: a JSON array whose elements
// are all objects with a string id of 1..256 bytes and a comment that is
// absent, null or a string.
func parseCheckpoints(body []byte) ([]checkpointEntry, bool) {
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, false
	}
	out := make([]checkpointEntry, 0, len(raw))
	for _, r := range raw {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return nil, false
		}
		id, ok := stringField(obj, "id")
		if !ok || len(id) < 1 || len(id) > 256 {
			return nil, false
		}
		e := checkpointEntry{ID: id}
		if c, present := obj["comment"]; present && string(bytes.TrimSpace(c)) != "null" {
			s, ok := stringField(obj, "comment")
			if !ok {
				return nil, false
			}
			e.Comment = &s
		}
		e.CreateTime, _ = stringField(obj, "create_time")
		out = append(out, e)
	}
	return out, true
}

// matchCheckpoint finds the one saved checkpoint carrying comment, or
// reports none or several.
func matchCheckpoint(body []byte, comment string) (string, bool) {
	entries, ok := parseCheckpoints(body)
	if !ok {
		return "", false
	}
	id, matches := "", 0
	for _, e := range entries {
		if e.Comment != nil && *e.Comment == comment {
			if e.ID == currentCheckpoint {
				return "", false
			}
			id = e.ID
			matches++
		}
	}
	return id, matches == 1
}

// restoreOutcome judges a restore's NDJSON body: an error event (or a
// non-empty error field) is a failed restore, whatever the HTTP status
// said; a stream that never completes leaves the outcome unknown.
func restoreOutcome(body []byte) error {
	events, err := ndjsonObjects(body)
	if err != nil {
		return &paddock.UnavailableError{Detail: "restore stream unreadable"}
	}
	completed := false
	for _, ev := range events {
		t, _ := stringField(ev, "type")
		msg, _ := stringField(ev, "error")
		if t == "error" || msg != "" {
			if msg == "" {
				msg, _ = stringField(ev, "data")
			}
			msg = cmp.Or(msg, "restore failed")
			return &paddock.RestoreFailedError{Detail: msg}
		}
		completed = completed || t == "complete"
	}
	if !completed {
		return &paddock.UnavailableError{Detail: "restore not confirmed: the stream has no completion"}
	}
	return nil
}

// streamFailure finds an error event in a (non-strict) progress stream.
func streamFailure(body []byte) string {
	events, err := ndjsonObjects(body)
	if err != nil {
		return ""
	}
	for _, ev := range events {
		t, _ := stringField(ev, "type")
		msg, _ := stringField(ev, "error")
		if t == "error" || msg != "" {
			msg = cmp.Or(msg, "error event")
			return msg
		}
	}
	return ""
}
