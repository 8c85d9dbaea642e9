package local

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
