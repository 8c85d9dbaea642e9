package e2b_test

import (
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b"
)

// FuzzParseExit: a journal's exit record is a code in 0..255 or nothing,
// whatever the file holds, and every code reads back from its record.
func FuzzParseExit(f *testing.F) {
	for _, s := range []string{"17\n", "0\n", "255\n", "bad\n", "", "7", " 3\n", "-1\n", "1e3\n", "\xff\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		code, ok := e2b.ParseExit(b)
		if !ok {
			return
		}
		if code < 0 || code > 255 {
			t.Fatalf("code %d from %q", code, b)
		}
		back, ok := e2b.ParseExit([]byte(strconv.Itoa(code) + "\n"))
		if !ok || back != code {
			t.Fatalf("the record of %d reads back as %d, %v", code, back, ok)
		}
	})
}
