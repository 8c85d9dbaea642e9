package sprites

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
)

// Stream ids of non-TTY binary frames: one byte, then the payload.
const (
	streamStdin    byte = 0 // client to server
	streamStdout   byte = 1
	streamStderr   byte = 2
	streamExit     byte = 3 // payload[0] is the exit code; an empty payload is 0
	streamStdinEOF byte = 4 // client to server
)

// maxHeld bounds the binary frames held while an attach waits to learn its
// mode from session_info.
const maxHeld = 4 << 20

// sessionInfo is the first text frame of every exec and attach.
type sessionInfo struct {
	ID      string
	TTY     bool
	IsOwner bool
}

// frameDecoder turns server messages into stream events. It knows the
// framing once it has session_info (whose tty flag is the session's truth);
// binary frames before it are held, then decoded in order.
type frameDecoder struct {
	tty      bool
	haveInfo bool
	held     [][]byte
	heldSize int
	exited   bool
}

// decode returns the events in one message, and the session info if it is
// one. After the exit it returns nothing more. Unknown stream ids, empty
// binary frames, unknown and non-JSON text frames are ignored.
func (d *frameDecoder) decode(kind int, data []byte) ([]paddock.Event, *sessionInfo) {
	if d.exited {
		return nil, nil
	}
	switch kind {
	case websocket.TextMessage:
		return d.text(data)
	case websocket.BinaryMessage:
		if !d.haveInfo {
			if d.heldSize+len(data) <= maxHeld {
				d.held = append(d.held, data)
				d.heldSize += len(data)
			}
			return nil, nil
		}
		return d.binary(data), nil
	}
	return nil, nil
}

// text decodes a JSON control message.
func (d *frameDecoder) text(data []byte) ([]paddock.Event, *sessionInfo) {
	if bytes.HasPrefix(data, []byte("control:")) {
		return nil, nil
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil {
		return nil, nil
	}
	switch t, _ := stringField(msg, "type"); t {
	case "session_info":
		if d.haveInfo {
			return nil, nil // only the first counts: a later one must not change the framing
		}
		info := &sessionInfo{ID: jsonID(msg["session_id"])}
		_ = json.Unmarshal(msg["tty"], &info.TTY)
		_ = json.Unmarshal(msg["is_owner"], &info.IsOwner)
		if info.ID == "" {
			return nil, nil
		}
		d.tty, d.haveInfo = info.TTY, true
		var events []paddock.Event
		for _, b := range d.held {
			events = append(events, d.binary(b)...)
		}
		d.held, d.heldSize = nil, 0
		return events, info
	case "exit":
		d.exited = true
		code, ok := intField(msg, "exit_code")
		if !ok || code < 0 || code > 255 {
			// The process ended with a code no process can have (-1,
			// 99999999999, "5", 1.5): its real code is unknown, and none
			// is made up.
			return []paddock.Event{paddock.Failed(paddock.ErrClosedBeforeExit)}, nil
		}
		return []paddock.Event{paddock.Exit(int(code))}, nil
	}
	return nil, nil
}

// binary decodes a data frame.
func (d *frameDecoder) binary(data []byte) []paddock.Event {
	if d.exited || len(data) == 0 {
		return nil
	}
	if d.tty {
		return []paddock.Event{paddock.Stdout(data)}
	}
	payload := data[1:]
	switch data[0] {
	case streamStdout:
		if len(payload) > 0 {
			return []paddock.Event{paddock.Stdout(payload)}
		}
	case streamStderr:
		if len(payload) > 0 {
			return []paddock.Event{paddock.Stderr(payload)}
		}
	case streamExit:
		code := 0
		if len(payload) > 0 {
			code = int(payload[0]) // one byte; never a 4-byte integer
		}
		d.exited = true
		return []paddock.Event{paddock.Exit(code)}
	}
	return nil
}

// jsonID reads a session id sent as a string or as a number.
func jsonID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
	}
	return ""
}
