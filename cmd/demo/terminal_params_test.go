package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParamClampLowersOnlyLargeParameters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		writes []string
		want   string
	}{
		{"a huge repeat count", []string{"a\x1b[2147483647b"}, "a\x1b[9999b"},
		{"split across writes", []string{"a\x1b[12", "345678", "b"}, "a\x1b[9999b"},
		{"the C1 CSI", []string{"a\x9b99999b"}, "a\x9b9999b"},
		{"0x9b inside a UTF-8 character is text", []string{"ț123456b"}, "ț123456b"},
		{"colours and modes pass", []string{"\x1b[38;2;255;0;10m\x1b[?2004h\x1b[1;31m"}, "\x1b[38;2;255;0;10m\x1b[?2004h\x1b[1;31m"},
		{"every parameter of a sequence", []string{"\x1b[123456;7;89012H"}, "\x1b[9999;7;9999H"},
		{"text after a sequence keeps its digits", []string{"\x1b[0m123456"}, "\x1b[0m123456"},
		{"CAN ends a sequence", []string{"\x1b[12\x18345678"}, "\x1b[12\x18345678"},
		{"ESC starts another", []string{"\x1b[12\x1b[99999b"}, "\x1b[12\x1b[9999b"},
		{"OSC text is not a CSI", []string{"\x1b]0;title 123456\x07"}, "\x1b]0;title 123456\x07"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var p paramClamp
			var got []byte
			for _, w := range c.writes {
				got = p.filter(got, []byte(w))
			}
			assert.Equal(t, c.want, string(got))
		})
	}
}

// A dozen bytes asking to repeat a character two billion times draw at
// most maxCSIParam of them: the screen answers at once (the bound is a
// hang's, generous; unclamped it took minutes).
func TestTermScreenBoundsARepeat(t *testing.T) {
	t.Parallel()
	s := newTermScreen(80, 24, 10)
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := s.Write([]byte("a\x1b[2147483647b\x9b2147483647b"))
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("the repeat still runs after a minute")
	}
	assert.Equal(t, "aaaaaaaaaa", update(t, s).Changed[0][0][0][:10])
}
