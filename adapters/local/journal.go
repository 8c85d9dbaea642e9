package local

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/pierrec/lz4/v4"

	"github.com/paddockhq/paddock"
)

// A session's journal is an append-only file of records, one per output
// chunk as it was read (so stream identity and chunk boundaries survive),
// then at most one terminal record:
//
//	[kind byte][length uint32, big-endian][length bytes]
//
// stdout and stderr carry the bytes, or (kinds 5 and 6) the bytes as one
// LZ4 block where that cuts them to a third (repetitive output, a stream
// of zeros or a chatty log, then costs the disk and its reader a fraction
// of its size); exit carries the code as an int32; error carries the
// reason token.
const (
	recStdout    byte = 1
	recStderr    byte = 2
	recExit      byte = 3
	recError     byte = 4
	recStdoutLZ4 byte = 5
	recStderrLZ4 byte = 6

	recHeader = 5
	// maxRecord bounds one record, so a corrupt length cannot make a reader
	// allocate without limit.
	maxRecord = 1 << 20
)

// readChunk is the most bytes one read of a command's output takes, and so
// the largest output record.
const readChunk = 128 << 10

// readBuffers recycles the buffers output is read into: a reader holds one
// for one read, and a session's writer until it copied the output out.
var readBuffers = sync.Pool{New: func() any { return new([readChunk]byte) }}

// recycle gives a buffer of readBuffers back.
func recycle(p []byte) {
	if cap(p) == readChunk {
		readBuffers.Put((*[readChunk]byte)(p[:readChunk]))
	}
}

// scratchBuffers hold one compressed record while it is written.
var scratchBuffers = sync.Pool{New: func() any { b := make([]byte, 4+lz4.CompressBlockBound(readChunk)); return &b }}

// compressors are LZ4 block compressors (each holds a hash table).
var compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// packer decides, for one session, whether to journal output records
// compressed: it tries each record while compression pays, and after a
// record that did not, journals the next skipAfterMiss raw before trying
// again, so output that does not compress costs little CPU. Only the
// session's writer calls it.
type packer struct {
	skip int
}

const skipAfterMiss = 32

// pack returns the record to journal for output data of kind (recStdout or
// recStderr): the kind and bytes to write, and a scratch buffer to give
// back to scratchBuffers once written (nil when data is written as is).
// Compressed, the bytes are the output's length (uint32, big-endian) and
// one LZ4 block; output is compressed only where that cuts it to a third
// (output that compresses less costs more CPU to compress than its disk
// write saves).
func (p *packer) pack(kind byte, data []byte) (byte, []byte, *[]byte) {
	if p.skip > 0 || len(data) < 512 {
		p.skip = max(p.skip-1, 0)
		return kind, data, nil
	}
	scratch := scratchBuffers.Get().(*[]byte)
	c := compressors.Get().(*lz4.Compressor)
	n, err := c.CompressBlock(data, (*scratch)[4:])
	compressors.Put(c)
	if err != nil || n == 0 || 4+n > len(data)/3 {
		scratchBuffers.Put(scratch)
		p.skip = skipAfterMiss
		return kind, data, nil
	}
	binary.BigEndian.PutUint32(*scratch, uint32(len(data)))
	if kind == recStderr {
		kind = recStderrLZ4
	} else {
		kind = recStdoutLZ4
	}
	return kind, (*scratch)[:4+n], scratch
}

// unpack turns a journaled record back into its output: compressed records
// are decoded (a block that does not decode to its stated length, or
// states one past maxRecord, is a corrupt journal).
func unpack(kind byte, data []byte) (byte, []byte, error) {
	if kind != recStdoutLZ4 && kind != recStderrLZ4 {
		return kind, data, nil
	}
	if len(data) < 4 {
		return 0, nil, errCorruptJournal
	}
	size := binary.BigEndian.Uint32(data)
	if size > maxRecord {
		return 0, nil, errCorruptJournal
	}
	out := make([]byte, size)
	n, err := lz4.UncompressBlock(data[4:], out)
	if err != nil || n != int(size) {
		return 0, nil, errCorruptJournal
	}
	if kind == recStderrLZ4 {
		return recStderr, out, nil
	}
	return recStdout, out, nil
}

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
	kind, data, err = unpack(kind, data)
	if err != nil {
		return 0, nil, false, err
	}
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

// scanJournal reads a whole journal and returns its terminal record (nil
// when it has none), and the size of its whole records (a torn tail left
// by a crash is not counted).
func scanJournal(path string) (end []byte, size int64, err error) {
	r, err := openJournal(path)
	if err != nil {
		return nil, 0, err
	}
	defer r.close()
	st, err := r.f.Stat()
	if err != nil {
		return nil, 0, err
	}
	for {
		kind, data, ok, err := r.next(st.Size())
		if err != nil || !ok {
			return end, r.pos, nil
		}
		end = nil
		if kind == recExit || kind == recError {
			end = encodeRecord(kind, data)
		}
	}
}

// endOf is the terminal event a terminal record holds.
func endOf(record []byte) (paddock.Event, error) {
	if len(record) < recHeader || int(binary.BigEndian.Uint32(record[1:recHeader])) != len(record)-recHeader {
		return paddock.Event{}, errCorruptJournal
	}
	ev, err := eventOf(record[0], record[recHeader:])
	if err == nil && !ev.Kind.Terminal() {
		return paddock.Event{}, errCorruptJournal
	}
	return ev, err
}
