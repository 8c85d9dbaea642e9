package local

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tail lets go of written records past maxTail only once every
// subscriber of this process has read them, and past maxLag whatever a
// subscriber has read; the newest written record and every unwritten one
// stay.
func TestTailKeepsWhatSubscribersHaveNotRead(t *testing.T) {
	t.Parallel()
	const chunk = 1 << 20
	// tailOf is a session whose tail holds records of chunk bytes, the
	// last unwritten of them queued, not yet on disk.
	tailOf := func(records, unwritten int) *session {
		s := &session{subscribers: map[*stream]struct{}{}}
		for i := range records {
			s.tail = append(s.tail, tailRecord{kind: recStdout, data: make([]byte, chunk), off: int64(i) * (chunk + recHeader), size: chunk + recHeader})
		}
		s.tailBytes = (records - unwritten) * chunk
		s.unwritten, s.pending = unwritten, unwritten*chunk
		return s
	}
	subscriberAt := func(s *session, record int) {
		st := &stream{}
		st.at.Store(int64(record) * (chunk + recHeader))
		s.subscribers[st] = struct{}{}
	}
	cases := []struct {
		name               string
		records, unwritten int
		subscribers        []int // the record each is to read next
		kept               int   // records left in the tail
	}{
		{"nobody subscribed: maxTail of written records", 10, 0, nil, maxTail / chunk},
		{"everyone read everything", 10, 0, []int{10, 10}, maxTail / chunk},
		{"a subscriber four records behind", 10, 0, []int{10, 6}, maxTail / chunk},
		{"a subscriber eight records behind keeps them", 10, 0, []int{10, 2}, 8},
		{"a subscriber that read nothing: up to maxLag", 30, 0, []int{0}, maxLag / chunk},
		{"unwritten records are not counted and stay", 30, 10, []int{0}, 10 + maxLag/chunk},
		{"the newest written record stays", 1, 0, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := tailOf(c.records, c.unwritten)
			for _, at := range c.subscribers {
				subscriberAt(s, at)
			}
			s.trim()
			assert.Equal(t, c.kept, len(s.tail), "records kept")
			assert.Equal(t, (c.kept-c.unwritten)*chunk, s.tailBytes, "written bytes kept")
			assert.Equal(t, int64(c.records-1)*(chunk+recHeader), s.tail[len(s.tail)-1].off, "the newest record is the last")
		})
	}
}

// A subscriber that has fallen behind gets a small output record joined
// with the written records of the same stream after it, up to readChunk
// bytes; a large record, another stream's, the terminal record and what
// is not written yet stay apart.
func TestTailJoinsSmallRecordsOfOneStream(t *testing.T) {
	t.Parallel()
	s := &session{}
	var off int64
	add := func(kind byte, data string) int64 {
		at := off
		s.tail = append(s.tail, tailRecord{kind: kind, data: []byte(data), off: at, size: recHeader + len(data)})
		off += int64(recHeader + len(data))
		return at
	}
	big := string(make([]byte, mergeBelow))
	a := add(recStdout, "a")
	add(recStdout, "b")
	add(recStdout, "c")
	e := add(recStderr, "e")
	add(recStderr, "f")
	b := add(recStdout, big)
	add(recStdout, "g")
	x := add(recExit, "\x00\x00\x00\x00")
	add(recStdout, "not written")
	s.unwritten = 1

	cases := []struct {
		name string
		off  int64
		kind byte
		data string
		disk int
	}{
		{"three stdout records joined", a, recStdout, "abc", 3 * (recHeader + 1)},
		{"stderr joined apart from stdout", e, recStderr, "ef", 2 * (recHeader + 1)},
		{"a large record alone", b, recStdout, big, recHeader + len(big)},
		{"the terminal record alone", x, recExit, "\x00\x00\x00\x00", recHeader + 4},
	}
	for _, c := range cases {
		kind, data, disk, ok := s.fromTail(c.off)
		require.True(t, ok, c.name)
		assert.Equal(t, c.kind, kind, c.name)
		assert.Equal(t, c.data, string(data), c.name)
		assert.Equal(t, c.disk, disk, c.name)
	}
	kind, data, _, ok := s.fromTail(b + int64(recHeader+len(big)))
	require.True(t, ok)
	assert.Equal(t, "g", string(data), "the record before the terminal one, alone")
	assert.Equal(t, recStdout, kind)
	_, _, _, ok = s.fromTail(x + recHeader + 4)
	assert.False(t, ok, "a record not written yet is not served")

	// Records joined up to readChunk bytes, no more.
	j := &session{}
	off = 0
	for range 5 {
		j.tail = append(j.tail, tailRecord{kind: recStdout, data: make([]byte, mergeBelow-1), off: off, size: recHeader + mergeBelow - 1})
		off += int64(recHeader + mergeBelow - 1)
	}
	_, data, disk, ok := j.fromTail(0)
	require.True(t, ok)
	assert.Len(t, data, 4*(mergeBelow-1), "four fit in readChunk, the fifth does not")
	assert.Equal(t, 4*(recHeader+mergeBelow-1), disk)
}

// The bytes a record hands out have no room after them: a subscriber that
// appends gets a new array, not the record's spare capacity another
// subscriber's append would share.
func TestRecordsHaveNoRoomToAppendInto(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 100, 1000, 33 << 10, readChunk} {
		p := sealed(make([]byte, n))
		assert.Equal(t, len(p), cap(p), "%d bytes", n)
	}
	s := &session{}
	s.tail = []tailRecord{{kind: recStdout, data: sealed([]byte("a")), size: recHeader + 1}, {kind: recStdout, data: sealed([]byte("b")), off: recHeader + 1, size: recHeader + 1}}
	_, joined, _, ok := s.fromTail(0)
	require.True(t, ok)
	assert.Equal(t, "ab", string(joined))
	assert.Equal(t, len(joined), cap(joined), "joined records too")
}
