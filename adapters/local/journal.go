package local

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"

	"github.com/paddockhq/paddock"
)

// A session's journal is an append-only file of records, one per output
// chunk as it was read (so stream identity and chunk boundaries survive),
// then at most one terminal record:
//
//	[kind byte][length uint32, big-endian][length bytes]
//
// stdout and stderr carry the bytes; exit carries the code as an int32;
// error carries the reason token.
const (
	recStdout byte = 1
	recStderr byte = 2
	recExit   byte = 3
	recError  byte = 4

	recHeader = 5
	// maxRecord bounds one record, so a corrupt length cannot make a reader
	// allocate without limit.
	maxRecord = 1 << 20
)

// readChunk is the most bytes one read of a command's output takes, and so
// the largest output record.
const readChunk = 32 << 10

// errCorruptJournal is a journal that cannot be parsed.
var errCorruptJournal = errors.New("corrupt session journal")

// encodeRecord returns one record.
func encodeRecord(kind byte, data []byte) []byte {
	b := make([]byte, recHeader+len(data))
	b[0] = kind
	binary.BigEndian.PutUint32(b[1:], uint32(len(data)))
	copy(b[recHeader:], data)
	return b
}

// exitRecord and errorRecord are the terminal records.
func exitRecord(code int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	return encodeRecord(recExit, b[:])
}

func errorRecord(reason string) []byte { return encodeRecord(recError, []byte(reason)) }

// eventOf decodes one record into a stream event.
func eventOf(kind byte, data []byte) (paddock.Event, error) {
	switch kind {
	case recStdout:
		return paddock.Stdout(data), nil
	case recStderr:
		return paddock.Stderr(data), nil
	case recExit:
		if len(data) != 4 {
			return paddock.Event{}, errCorruptJournal
		}
		return paddock.Exit(int(int32(binary.BigEndian.Uint32(data)))), nil
	case recError:
		if string(data) == paddock.DetailSessionOutputLimit {
			return paddock.Failed(&paddock.InvalidError{Detail: paddock.DetailSessionOutputLimit}), nil
		}
		return paddock.Failed(&paddock.UnavailableError{Detail: string(data)}), nil
	}
	return paddock.Event{}, errCorruptJournal
}

// journalReader reads records from a journal file from byte zero, up to the
// size the writer has published; it never reads a half-written record.
type journalReader struct {
	f   *os.File
	pos int64  // offset of the next unread byte in the file
	buf []byte // bytes read ahead, starting at pos
}

func openJournal(path string) (*journalReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &journalReader{f: f}, nil
}

// next returns the next whole record below limit, or ok=false when there is
// none yet.
func (r *journalReader) next(limit int64) (kind byte, data []byte, ok bool, err error) {
	if !r.fill(recHeader, limit) {
		return 0, nil, false, r.fillErr(limit)
	}
	n := int(binary.BigEndian.Uint32(r.buf[1:recHeader]))
	if n > maxRecord {
		return 0, nil, false, errCorruptJournal
	}
	if !r.fill(recHeader+n, limit) {
		return 0, nil, false, r.fillErr(limit)
	}
	kind = r.buf[0]
	data = append([]byte(nil), r.buf[recHeader:recHeader+n]...) // events own their bytes
	r.buf = r.buf[recHeader+n:]
	r.pos += int64(recHeader + n)
	return kind, data, true, nil
}

// skipTo drops read-ahead and continues at off (after records served from
// memory).
func (r *journalReader) skipTo(off int64) {
	r.pos, r.buf = off, r.buf[:0]
}

// fill reads ahead until want bytes are buffered, never past limit.
func (r *journalReader) fill(want int, limit int64) bool {
	for len(r.buf) < want {
		avail := limit - r.pos - int64(len(r.buf))
		if avail <= 0 {
			return false
		}
		chunk := int(min(avail, int64(max(want-len(r.buf), 64<<10))))
		start := len(r.buf)
		r.buf = slices.Grow(r.buf, chunk)[:start+chunk]
		n, err := r.f.ReadAt(r.buf[start:], r.pos+int64(start))
		r.buf = r.buf[:start+n]
		if err != nil && !errors.Is(err, io.EOF) {
			return false
		}
		if n == 0 {
			return false
		}
	}
	return true
}

// fillErr reports a journal shorter than its published size (or a torn
// final record of a journal left by a crash) as corrupt.
func (r *journalReader) fillErr(limit int64) error {
	if r.pos+int64(len(r.buf)) < limit {
		return errCorruptJournal
	}
	return nil
}

func (r *journalReader) close() error { return r.f.Close() }

// lastRecord reads a whole journal and reports whether it ends with a
// terminal record, and the size of its whole records (a torn tail left by a
// crash is not counted).
func scanJournal(path string) (terminal bool, size int64, err error) {
	r, err := openJournal(path)
	if err != nil {
		return false, 0, err
	}
	defer r.close()
	st, err := r.f.Stat()
	if err != nil {
		return false, 0, err
	}
	for {
		kind, _, ok, err := r.next(st.Size())
		if err != nil || !ok {
			return terminal, r.pos, nil
		}
		terminal = kind == recExit || kind == recError
	}
}
