package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Size is the grid's columns and rows.
func (t *termScreen) Size() (cols, rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.em.Width(), t.em.Height()
}

// Text is the screen's characters, one line per row with trailing spaces
// trimmed.
func (t *termScreen) Text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := make([]string, t.em.Height())
	for y := range lines {
		lines[y] = strings.TrimRight(runsText(t.row(y)), " ")
	}
	return strings.Join(lines, "\n")
}

// update takes t's next update.
func update(t *testing.T, s *termScreen) screenUpdate {
	t.Helper()
	var got screenUpdate
	require.NoError(t, s.Update(func(u screenUpdate) error { got = u; return nil }))
	return got
}

// text is runs' characters.
func runsText(runs []cellRun) string {
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(r[0])
	}
	return b.String()
}

func TestTermScreenDrawsWhatATerminalWould(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, output string
		check        func(t *testing.T, s *termScreen, u screenUpdate)
	}{
		{"colours of ls --color", "\x1b[0m\x1b[01;34metc\x1b[0m  notes.txt", func(t *testing.T, s *termScreen, u screenUpdate) {
			require.GreaterOrEqual(t, len(u.Changed[0]), 2)
			assert.Equal(t, cellRun{"etc", "color:#4aa5f0;font-weight:bold;"}, u.Changed[0][0], "bold blue, as the console's palette has it")
			assert.Equal(t, "  notes.txt", strings.TrimRight(u.Changed[0][1][0], " "))
			assert.Empty(t, u.Changed[0][1][1], "reset to the terminal's own colours")
			assert.NotContains(t, s.Text(), "\x1b", "no escape code shows")
		}},
		{"256 colours and truecolor", "\x1b[38;5;196mR\x1b[0m\x1b[48;2;1;2;3mB\x1b[7mV", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.Equal(t, cellRun{"R", "color:#ff0000;"}, u.Changed[0][0])
			assert.Equal(t, cellRun{"B", "background:#010203;"}, u.Changed[0][1])
			assert.Equal(t, cellRun{"V", "color:#010203;background:#d8dee9;"}, u.Changed[0][2], "reverse video swaps the colours")
		}},
		{"cursor movement", "\x1b[3;5Hab\x1b[1;1Hx", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.Equal(t, "x\n\n    ab", strings.TrimRight(s.Text(), "\n"))
			assert.Equal(t, [2]int{1, 0}, [2]int{u.CursorX, u.CursorY})
		}},
		{"alternate screen", "main\x1b[?1049h\x1b[Hfull screen", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.True(t, u.AltScreen)
			assert.Equal(t, "full screen", strings.TrimSpace(s.Text()))
			_, _ = s.Write([]byte("\x1b[?1049l"))
			assert.False(t, update(t, s).AltScreen)
			assert.Equal(t, "main", strings.TrimSpace(s.Text()), "leaving it shows the main screen as it was")
		}},
		{"wide characters and UTF-8", "中文ok é", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.Equal(t, "中文ok é", strings.TrimRight(runsText(u.Changed[0]), " "))
			assert.Len(t, []rune(runsText(u.Changed[0])), 80-2, "a wide character takes two cells and is sent once")
		}},
		{"modes that change what keys send", "\x1b[?1h\x1b[?2004h\x1b]0;my title\x07", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.True(t, u.AppCursor)
			assert.True(t, u.BracketedPaste)
			assert.Equal(t, "my title", u.Title)
		}},
		{"a long title is cut", "\x1b]0;" + strings.Repeat("é", 5000) + "\x07", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.Equal(t, strings.Repeat("é", maxTitle)+"…", u.Title)
		}},
		{"cursor hidden", "\x1b[?25l", func(t *testing.T, s *termScreen, u screenUpdate) {
			assert.True(t, u.CursorHidden)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newTermScreen(80, 24, defaultScrollback)
			defer s.Close()
			_, err := s.Write([]byte(c.output))
			require.NoError(t, err)
			u := update(t, s)
			assert.Equal(t, 80, u.Cols)
			assert.Equal(t, 24, u.Rows)
			c.check(t, s, u)
		})
	}
}

func TestTermScreenSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	s := newTermScreen(20, 3, 4)
	defer s.Close()
	first := update(t, s)
	assert.Len(t, first.Changed, 3, "the first update is every row")
	_, _ = s.Write([]byte("a"))
	u := update(t, s)
	assert.Len(t, u.Changed, 1, "one row changed")
	assert.Equal(t, "a", strings.TrimSpace(runsText(u.Changed[0])))
	assert.Empty(t, update(t, s).Changed, "nothing changed")

	// Lines that scroll off the top are sent once, oldest first, and at
	// most the scrollback kept.
	_, _ = s.Write([]byte("\r\n1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7"))
	u = update(t, s)
	var scrolled []string
	for _, l := range u.Scrolled {
		scrolled = append(scrolled, strings.TrimSpace(runsText(l)))
	}
	assert.Equal(t, []string{"1", "2", "3", "4"}, scrolled, "a, 1..4 scrolled off; at most the 4 kept lines are sent")
	assert.Empty(t, update(t, s).Scrolled, "sent once")
	_, _ = s.Write([]byte("\r\n8"))
	u = update(t, s)
	require.Len(t, u.Scrolled, 1)
	assert.Equal(t, "5", strings.TrimSpace(runsText(u.Scrolled[0])))

	// A resize sends every row at the new size.
	require.NoError(t, s.Resize(30, 5))
	u = update(t, s)
	assert.Equal(t, [2]int{30, 5}, [2]int{u.Cols, u.Rows})
	assert.Len(t, u.Changed, 5)
}

func TestTermScreenAnswersQueries(t *testing.T) {
	t.Parallel()
	s := newTermScreen(80, 24, defaultScrollback)
	_, _ = s.Write([]byte("\x1b[5;7H\x1b[6n"))
	select {
	case r := <-s.Replies():
		assert.Equal(t, "\x1b[5;7R", string(r), "the cursor position report goes back to the program")
	case <-time.After(time.Minute):
		t.Fatal("no answer to a cursor position query")
	}
	s.Close()
	_, open := <-s.Replies()
	assert.False(t, open, "Close ends the replies")
}

func TestTermScreenSizeIsBounded(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{0, 0}, {-3, 5}, {1000, 1000}, {1 << 40, 1 << 40}, {1 << 20, 3}} {
		s := newTermScreen(size[0], size[1], defaultScrollback)
		cols, rows := s.Size()
		assert.GreaterOrEqual(t, cols, 1)
		assert.GreaterOrEqual(t, rows, 1)
		assert.LessOrEqual(t, cols*rows, maxTermCells)
		s.Close()
	}
}

// A flood holds at most twice the kept scrollback between updates, and an
// update sends the newest lines that scrolled off, at most those kept.
func TestTermScreenScrollbackIsBounded(t *testing.T) {
	t.Parallel()
	s := newTermScreen(20, 5, 100)
	defer s.Close()
	var flood strings.Builder
	for i := 1; i <= 50000; i++ {
		fmt.Fprintf(&flood, "%d\r\n", i)
	}
	_, _ = s.Write([]byte(flood.String()))
	assert.LessOrEqual(t, s.main.Len(), 200, "held between updates")
	u := update(t, s)
	require.Len(t, u.Scrolled, 100)
	assert.Equal(t, "49996", strings.TrimSpace(runsText(u.Scrolled[99])), "the newest line that scrolled off (4 lines and the cursor's are on the screen)")
	assert.Equal(t, "49897", strings.TrimSpace(runsText(u.Scrolled[0])))
	assert.LessOrEqual(t, s.main.Len(), 100, "kept after the update")
}

// A program that clears the scrollback (ED 3, as clear does) tells the
// page to drop its own.
func TestTermScreenClearsTheScrollback(t *testing.T) {
	t.Parallel()
	s := newTermScreen(20, 3, 100)
	defer s.Close()
	_, _ = s.Write([]byte("1\r\n2\r\n3\r\n4\r\n5"))
	require.Len(t, update(t, s).Scrolled, 2)
	_, _ = s.Write([]byte("\x1b[H\x1b[2J\x1b[3J"))
	u := update(t, s)
	assert.True(t, u.ClearScroll)
	assert.Empty(t, u.Scrolled)
	_, _ = s.Write([]byte("a\r\nb\r\nc\r\nd"))
	u = update(t, s)
	assert.False(t, u.ClearScroll)
	require.Len(t, u.Scrolled, 1)
	assert.Equal(t, "a", strings.TrimSpace(runsText(u.Scrolled[0])))
}

// Whatever a program prints, the screen draws it without a panic, an
// update describes a grid of its size, and a resize between writes holds.
func FuzzTermScreen(f *testing.F) {
	for _, seed := range []string{
		"\x1b[01;34metc\x1b[0m\r\n", "\x1b[?1049h\x1b[2J\x1b[Hvi\x1b[?1049l", "\x1b[38;2;1;2;3m\x1b[48;5;200mX",
		"\x1b]0;title\x07\x1b[6n\x1b[c", "中文\x1b[3;5H\x1b[K\x1b[?25l", "\x1b[r\x1b[5;10r\x1bM\x1bD\x1b[L\x1b[M",
		"\x1bP1$r\x1b\\\x1b_apc\x1b\\", "\x1b[999;999H\x1b[1000@\x1b[1000P\x1b[3J",
	} {
		f.Add([]byte(seed), uint8(80), uint8(24))
	}
	f.Fuzz(func(t *testing.T, out []byte, cols, rows uint8) {
		s := newTermScreen(20, 5, 10)
		defer s.Close()
		go func() { // the answers to queries, as stdin would take them
			for range s.Replies() {
			}
		}()
		half := len(out) / 2
		_, _ = s.Write(out[:half])
		_ = s.Resize(int(cols%120)+1, int(rows%50)+1) // an emulator that fails starts again: no panic, a whole grid
		_, _ = s.Write(out[half:])
		u := update(t, s)
		w, h := s.Size()
		require.Equal(t, [2]int{w, h}, [2]int{u.Cols, u.Rows})
		for y := range u.Changed {
			require.True(t, y >= 0 && y < h, "row %d of %d", y, h)
		}
		assert.LessOrEqual(t, len(u.Scrolled), 10)
	})
}

// Output the emulator fails on (charmbracelet/x/vt v0.1.0 indexes past its
// grid on a reverse index in a scroll region set past the screen's end;
// the fuzz target found it) is the error, not a panic: the screen starts
// again blank, draws what follows, and keeps its size.
func TestTermScreenOutlivesItsEmulator(t *testing.T) {
	t.Parallel()
	s := newTermScreen(20, 5, 10)
	defer s.Close()
	_, err := s.Write([]byte("\x1b[;10r\x1bM")) // a scroll region to row 10 of 5, a reverse index
	require.Error(t, err, "the input the fuzz target found makes the emulator panic")
	assert.Contains(t, err.Error(), "starts again blank")
	_, err = s.Write([]byte("after"))
	require.NoError(t, err)
	u := update(t, s)
	assert.Equal(t, "after", strings.TrimSpace(runsText(u.Changed[0])))
	cols, rows := s.Size()
	assert.Equal(t, [2]int{u.Cols, u.Rows}, [2]int{cols, rows})
}
