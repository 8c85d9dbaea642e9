package daytona_test

import (
	"bytes"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// split is what a journal demuxes to: each stream's bytes, in order, and
// the order of the stream switches.
type split struct {
	stdout, stderr string
	order          string // "o"/"e" per segment, adjacent ones merged
}

func collect(segs []daytona.Segment, into *split) {
	for _, s := range segs {
		tag := "o"
		if s.Stream == daytona.Stderr {
			tag = "e"
			into.stderr += string(s.Data)
		} else {
			into.stdout += string(s.Data)
		}
		if n := len(into.order); n == 0 || into.order[n-1:] != tag {
			into.order += tag
		}
	}
}

// demuxChunks demuxes a journal delivered in the given chunks.
func demuxChunks(chunks ...[]byte) split {
	var d daytona.Demux
	var out split
	for _, c := range chunks {
		collect(d.Write(c), &out)
	}
	collect(d.Flush(), &out)
	return out
}

// oracle demuxes the whole journal byte by byte: a marker starting here
// switches the stream, any other byte belongs to the current one (none
// before the first marker).
func oracle(b []byte) split {
	var out split
	cur := daytona.Stream(0)
	var segs []daytona.Segment
	for i := 0; i < len(b); {
		switch {
		case bytes.HasPrefix(b[i:], []byte{1, 1, 1}):
			cur, i = daytona.Stdout, i+3
		case bytes.HasPrefix(b[i:], []byte{2, 2, 2}):
			cur, i = daytona.Stderr, i+3
		default:
			if cur != 0 {
				segs = append(segs, daytona.Segment{Stream: cur, Data: []byte{b[i]}})
			}
			i++
		}
	}
	collect(segs, &out)
	return out
}

const (
	o = "\x01\x01\x01"
	e = "\x02\x02\x02"
)

// Whole journals, as the rules of Daytona's demuxers read them.
func TestDemuxRules(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		journal string
		want    split
	}{
		"lines of both streams":           {o + "out\n" + e + "err\n" + o + "more\n", split{"out\nmore\n", "err\n", "oeo"}},
		"bytes before the first marker":   {"lost" + e + "err", split{"", "err", "e"}},
		"a lone marker byte is content":   {o + "\x01x\x02y\n", split{"\x01x\x02y\n", "", "o"}},
		"two marker bytes are content":    {o + "\x01\x01x" + e + "\x02\x02", split{"\x01\x01x", "\x02\x02", "oe"}},
		"a marker inside a line switches": {e + "\x01\x01\x01fake\n", split{"fake\n", "", "o"}},
		"a fourth marker byte is content": {"\x01\x01\x01\x01x", split{"\x01x", "", "o"}},
		"nothing":                         {"", split{}},
		"markers only":                    {o + e + o, split{}},
		"a journal without markers":       {"plain text\n", split{}},
		"CR, tabs, invalid UTF-8 kept":    {o + "cr\r\n\t\xff\xfe\n", split{"cr\r\n\t\xff\xfe\n", "", "o"}},
		"a trailing partial marker":       {o + "x\x02\x02", split{"x\x02\x02", "", "o"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, demuxChunks([]byte(tc.journal)))
			assert.Equal(t, tc.want, oracle([]byte(tc.journal)), "the oracle agrees")
		})
	}
}

// Every cut position of every marker, and every byte alone: the chunking
// never changes what each stream gets.
func TestDemuxEveryCut(t *testing.T) {
	t.Parallel()
	journals := []string{
		o + "out1\n" + e + "err1\n" + o + "tail\n",
		e + "\x01\x01\x01fake\n" + o + "\x01x\x02y\n",
		"pre" + o + "a" + e + "b" + o + e + "c\x01\x01",
		o + "\x01\x01" + e + "\x02\x02" + o + "\x01",
	}
	for _, j := range journals {
		want := oracle([]byte(j))
		for cut := 0; cut <= len(j); cut++ {
			require.Equal(t, want, demuxChunks([]byte(j[:cut]), []byte(j[cut:])), "journal %q cut at %d", j, cut)
			for cut2 := cut; cut2 <= len(j); cut2++ {
				require.Equal(t, want, demuxChunks([]byte(j[:cut]), []byte(j[cut:cut2]), []byte(j[cut2:])), "journal %q cut at %d and %d", j, cut, cut2)
			}
		}
		var bytewise [][]byte
		for i := range len(j) {
			bytewise = append(bytewise, []byte{j[i]})
		}
		require.Equal(t, want, demuxChunks(bytewise...), "journal %q a byte at a time", j)
	}
}

// Output never aliases the caller's chunk.
func TestDemuxCopies(t *testing.T) {
	t.Parallel()
	var d daytona.Demux
	chunk := []byte(o + "abc")
	segs := d.Write(chunk)
	copy(chunk, "zzzzzz")
	require.Len(t, segs, 1)
	assert.Equal(t, "abc", string(segs[0].Data))
}

// FuzzDemux: however a journal is cut, each stream gets exactly what the
// byte-by-byte oracle gives.
func FuzzDemux(f *testing.F) {
	for _, s := range []string{o + "out\n" + e + "err\n", "pre" + o + "x\x01\x01", e + "\x01\x01\x01fake", o + "\x01\x02\x01\x02"} {
		f.Add([]byte(s), []byte{1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, journal, cuts []byte) {
		var chunks [][]byte
		rest := journal
		for _, c := range cuts {
			n := int(c) % (len(rest) + 1)
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		chunks = append(chunks, rest)
		got, want := demuxChunks(chunks...), oracle(journal)
		if got != want {
			t.Fatalf("journal %q in chunks %q: got %+v, want %+v", journal, chunks, got, want)
		}
	})
}
