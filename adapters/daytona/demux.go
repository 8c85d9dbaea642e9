package daytona

import "bytes"

// Daytona's session journal labels each line with a three-byte marker:
// 01 01 01 for stdout, 02 02 02 for stderr. The markers are the journal's
// only framing; content bytes are not escaped.
var (
	stdoutMarker = []byte{1, 1, 1}
	stderrMarker = []byte{2, 2, 2}
)

// Stream names which output a demuxed segment belongs to.
type Stream int

// The two outputs.
const (
	Stdout Stream = 1
	Stderr Stream = 2
)

// Segment is a run of bytes of one stream.
type Segment struct {
	Stream Stream
	Data   []byte
}

// Demux splits a journal read in arbitrary chunks into stream segments.
// It routes the bytes after a marker to that marker's stream until the
// next marker, holds back up to two trailing bytes that may begin a
// marker cut across chunks, and drops bytes before the first marker (as
// Daytona's own demuxers do: the journal always starts with one). The
// zero value is ready.
type Demux struct {
	stream Stream // 0 before the first marker
	carry  []byte // trailing bytes that may start a marker
}

// Write demuxes the next chunk and returns its complete segments (no
// empty ones). The returned data does not alias chunk.
func (d *Demux) Write(chunk []byte) []Segment {
	buf := append(d.carry, chunk...)
	d.carry = nil
	var out []Segment
	emit := func(b []byte) {
		if len(b) > 0 && d.stream != 0 {
			if n := len(out); n > 0 && out[n-1].Stream == d.stream {
				out[n-1].Data = append(out[n-1].Data, b...)
				return
			}
			out = append(out, Segment{Stream: d.stream, Data: append([]byte(nil), b...)})
		}
	}
	for {
		at, s := nextMarker(buf)
		if at < 0 {
			break
		}
		emit(buf[:at])
		d.stream = s
		buf = buf[at+len(stdoutMarker):]
	}
	keep := heldBack(buf)
	emit(buf[:len(buf)-keep])
	if keep > 0 {
		d.carry = append([]byte(nil), buf[len(buf)-keep:]...)
	}
	return out
}

// Flush returns what Write held back because it might have started a
// marker: at the end of the journal it is content.
func (d *Demux) Flush() []Segment {
	rest := d.carry
	d.carry = nil
	if len(rest) == 0 || d.stream == 0 {
		return nil
	}
	return []Segment{{Stream: d.stream, Data: rest}}
}

// nextMarker finds the earliest complete marker in b: its offset and
// stream, or -1.
func nextMarker(b []byte) (int, Stream) {
	o, e := bytes.Index(b, stdoutMarker), bytes.Index(b, stderrMarker)
	switch {
	case o < 0 && e < 0:
		return -1, 0
	case e < 0 || (o >= 0 && o < e):
		return o, Stdout
	default:
		return e, Stderr
	}
}

// heldBack is how many trailing bytes of b (which holds no complete
// marker) could begin one: a trailing 01 or 01 01, 02 or 02 02.
func heldBack(b []byte) int {
	for _, n := range []int{2, 1} {
		if len(b) < n {
			continue
		}
		tail := b[len(b)-n:]
		if bytes.Equal(tail, stdoutMarker[:n]) || bytes.Equal(tail, stderrMarker[:n]) {
			return n
		}
	}
	return 0
}
