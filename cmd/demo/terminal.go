package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"strings"
	"sync"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/paddockhq/paddock"
)

// A terminal view's screen is kept here, not in the page: the command's
// output goes through a terminal emulator (github.com/charmbracelet/x/vt),
// and the page is sent the cells it shows, one row at a time when a row
// changed. A page that opens late, re-attaches or resizes is sent the
// screen as it is, never the raw bytes to replay.

// Defaults of a terminal view.
const (
	// defaultScrollback is how many lines that scrolled off the top the
	// server keeps for a page (and sends when they scroll off): the
	// console's -scrollback. A line holds a cell (about 110 bytes) per
	// column up to its last printed one.
	defaultScrollback = 1000
	// maxTermCells bounds one terminal's grid (the contract's 1..1000 a
	// side would allow a million cells, over 100 MiB of emulator): a
	// larger size is refused (checkTermSize).
	maxTermCells = 500 * 200
	// replyQueue is how many answers of the emulator to the program's
	// queries (cursor position, device attributes) may wait for stdin;
	// more are dropped rather than stall the screen.
	replyQueue = 64
)

// cellRun is a stretch of one row's cells in one style: its text and the CSS
// the page gives it ("" is the terminal's own colours).
type cellRun [2]string

// screenUpdate is what a terminal view's page is sent: the grid's size,
// the rows that changed since the last update (by index), the lines that
// scrolled off the top since then (oldest first), the cursor, and the
// modes that change what a key sends.
type screenUpdate struct {
	Type           string            `json:"type"` // "screen"
	Cols           int               `json:"cols"`
	Rows           int               `json:"rows"`
	Changed        map[int][]cellRun `json:"changed,omitempty"`
	Scrolled       [][]cellRun       `json:"scrolled,omitempty"`
	ClearScroll    bool              `json:"clear_scroll,omitempty"` // the program cleared the scrollback
	CursorX        int               `json:"cursor_x"`
	CursorY        int               `json:"cursor_y"`
	CursorHidden   bool              `json:"cursor_hidden,omitempty"`
	AltScreen      bool              `json:"alt_screen,omitempty"`
	AppCursor      bool              `json:"app_cursor,omitempty"`      // arrows send ESC O x (DECCKM)
	BracketedPaste bool              `json:"bracketed_paste,omitempty"` // a paste is wrapped in ESC [200~ .. ESC [201~
	Title          string            `json:"title,omitempty"`
}

// termScreen is one terminal view's emulator. Its methods may be called
// from any goroutine; the answers the emulator gives to the program's
// queries come out of Replies. The emulator is a library's, and output it
// fails on (a panic) replaces it with a blank screen of the same size
// rather than end the view, or the console.
type termScreen struct {
	mu             sync.Mutex
	em             *vt.Emulator
	pipe           *io.PipeWriter // em's answers, read by a goroutine of readers
	main           *vt.Scrollback // em's main screen's, which the alternate screen leaves alone
	scrollLen      int            // main's length after the last update
	keep           int            // scrollback lines kept
	sent           []string       // each row as last sent (its JSON); nil = send every row
	title          string
	appCursor      bool
	bracketedPaste bool
	closed         bool
	clamp          paramClamp // what the program writes passes it on its way to em
	clamped        []byte     // its output, reused
	replies        chan []byte
	readers        sync.WaitGroup
}

// newTermScreen is a screen of cols x rows (clamped to at least 1x1 and
// at most maxTermCells) keeping scrollback lines.
func newTermScreen(cols, rows, scrollback int) *termScreen {
	t := &termScreen{keep: max(scrollback, 1), replies: make(chan []byte, replyQueue)}
	t.start(clampSize(cols, rows))
	return t
}

// start puts a blank emulator of cols x rows in place (on mu, but for
// newTermScreen) with a goroutine reading its answers.
func (t *termScreen) start(cols, rows int) {
	em := vt.NewEmulator(cols, rows)
	t.em, t.sent, t.scrollLen = em, nil, 0
	t.title, t.appCursor, t.bracketedPaste = "", false, false
	t.main = em.Scrollback()
	// Between updates the scrollback may grow to twice what is kept, and
	// an update cuts it back: fewer than keep lines scrolled off are
	// counted exactly, and of more, the newest keep are all that is sent.
	t.main.SetMaxLines(2 * t.keep)
	em.SetCallbacks(vt.Callbacks{
		Title:       func(s string) { t.title = shortTitle(s) },
		EnableMode:  func(m ansi.Mode) { t.setMode(m, true) },
		DisableMode: func(m ansi.Mode) { t.setMode(m, false) },
	})
	t.pipe, _ = em.InputPipe().(*io.PipeWriter)
	t.readers.Go(func() { t.readReplies(em) })
}

// maxTitle bounds the window title a program sets (in runes): every
// update carries it.
const maxTitle = 200

// shortTitle is s cut to maxTitle runes.
func shortTitle(s string) string {
	if r := []rune(s); len(r) > maxTitle {
		return string(r[:maxTitle]) + "…"
	}
	return s
}

// guarded runs f on the emulator (on mu). A panic of the emulator puts a
// blank one of the same size in its place and is the error.
func (t *termScreen) guarded(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			cols, rows := t.em.Width(), t.em.Height()
			_ = t.pipe.CloseWithError(io.EOF)
			if !t.closed {
				t.start(cols, rows)
			}
			err = fmt.Errorf("the terminal emulator failed on the program's output (%v): the screen starts again blank", v)
		}
	}()
	f()
	return nil
}

// checkTermSize refuses a terminal the console would not draw whole.
func checkTermSize(cols, rows int) error {
	if cols*rows > maxTermCells {
		return &paddock.InvalidError{Detail: fmt.Sprintf("%s: the console draws at most %d cells (%dx%d asked)", paddock.DetailTermSize, maxTermCells, cols, rows)}
	}
	return nil
}

// clampSize keeps a grid between 1x1 and maxTermCells.
func clampSize(cols, rows int) (int, int) {
	cols, rows = min(max(cols, 1), maxTermCells), max(rows, 1)
	return cols, min(rows, maxTermCells/cols)
}

func (t *termScreen) setMode(m ansi.Mode, on bool) {
	switch m {
	case ansi.ModeCursorKeys:
		t.appCursor = on
	case ansi.ModeBracketedPaste:
		t.bracketedPaste = on
	}
}

// readReplies moves em's answers to the program's queries into Replies,
// dropping what does not fit: the emulator writes them synchronously,
// while it draws.
func (t *termScreen) readReplies(em *vt.Emulator) {
	buf := make([]byte, 4096)
	for {
		n, err := em.Read(buf)
		if n > 0 {
			select {
			case t.replies <- append([]byte(nil), buf[:n]...):
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// Replies carries what the terminal answers the program's queries, to be
// written to its stdin; it is closed by Close.
func (t *termScreen) Replies() <-chan []byte { return t.replies }

// Write draws the program's output; an error says the emulator failed on
// it and the screen started again.
func (t *termScreen) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clamped = t.clamp.filter(t.clamped[:0], p)
	err := t.guarded(func() { _, _ = t.em.Write(t.clamped) })
	if cap(t.clamped) > 64<<10 {
		t.clamped = nil // a flood's large frames are not held while the screen is quiet
	}
	return len(p), err
}

// Resize changes the grid's size; the next update sends every row.
func (t *termScreen) Resize(cols, rows int) error {
	cols, rows = clampSize(cols, rows)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.guarded(func() {
		t.em.Resize(cols, rows)
		t.sent = nil
	})
}

// Close ends the screen: Replies is closed once its readers have stopped.
func (t *termScreen) Close() {
	t.mu.Lock()
	t.closed = true
	_ = t.pipe.CloseWithError(io.EOF)
	t.mu.Unlock()
	t.readers.Wait()
	close(t.replies)
}

// Update is what changed since the last update (everything, the first
// time or after a resize); send passes it on while the screen is held,
// so updates reach the page in the order they were taken.
func (t *termScreen) Update(send func(screenUpdate) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var u screenUpdate
	if err := t.guarded(func() { u = t.changes() }); err != nil {
		u = t.changes() // of the blank screen
	}
	return send(u)
}

// changes is what changed since the last update (on mu).
func (t *termScreen) changes() screenUpdate {
	rows := t.em.Height()
	u := screenUpdate{Type: "screen", Cols: t.em.Width(), Rows: rows, Changed: map[int][]cellRun{},
		CursorHidden: t.em.CursorHidden(), AltScreen: t.em.IsAltScreen(),
		AppCursor: t.appCursor, BracketedPaste: t.bracketedPaste, Title: t.title}
	pos := t.em.CursorPosition()
	u.CursorX, u.CursorY = pos.X, pos.Y
	if len(t.sent) != rows {
		t.sent = make([]string, rows)
	}
	for y := range rows {
		r := t.row(y)
		enc, _ := json.Marshal(r)
		if string(enc) != t.sent[y] {
			u.Changed[y], t.sent[y] = r, string(enc)
		}
	}
	n, from := t.main.Len(), t.scrollLen
	if n < t.scrollLen { // cleared (ED 3), then maybe scrolled again
		u.ClearScroll, from = true, 0
	}
	for i := max(from, n-t.keep); i < n; i++ {
		u.Scrolled = append(u.Scrolled, lineRuns(t.main.Line(i)))
	}
	t.main.SetMaxLines(t.keep) // cut to what is kept, then free to grow again
	t.main.SetMaxLines(2 * t.keep)
	t.scrollLen = t.main.Len()
	return u
}

// row is row y of the screen as runs.
func (t *termScreen) row(y int) []cellRun {
	w := t.em.Width()
	cells := make([]*uv.Cell, w)
	for x := range w {
		cells[x] = t.em.CellAt(x, y)
	}
	return runsOf(cells)
}

// lineRuns is a scrollback line as runs.
func lineRuns(line uv.Line) []cellRun {
	cells := make([]*uv.Cell, 0, len(line))
	for i := range line {
		cells = append(cells, &line[i])
	}
	return runsOf(cells)
}

// runsOf groups cells of one style; the second half of a wide character
// (a cell of width 0) adds nothing, an empty cell is a space.
func runsOf(cells []*uv.Cell) []cellRun {
	var out []cellRun
	var text strings.Builder
	style := ""
	flush := func() {
		if text.Len() > 0 {
			out = append(out, cellRun{text.String(), style})
			text.Reset()
		}
	}
	covered := 0 // cells still covered by the last wide character
	for _, c := range cells {
		content, css := " ", ""
		if covered > 0 {
			covered--
			if c == nil || c.Content == "" {
				continue
			}
		}
		if c != nil {
			if c.Content != "" {
				content = c.Content
			}
			covered = max(c.Width-1, 0)
			css = cssOf(&c.Style)
		}
		if css != style {
			flush()
			style = css
		}
		text.WriteString(content)
	}
	flush()
	return out
}

// The page's own colours, which reverse video swaps.
const (
	defaultFg = "#d8dee9"
	defaultBg = "#0f131c"
)

// cssOf is a cell style as CSS ("" for none).
func cssOf(s *uv.Style) string {
	if s.IsZero() {
		return ""
	}
	fg, bg := hexOf(s.Fg), hexOf(s.Bg)
	if s.Attrs&uv.AttrReverse != 0 {
		if fg == "" {
			fg = defaultFg
		}
		if bg == "" {
			bg = defaultBg
		}
		fg, bg = bg, fg
	}
	var b strings.Builder
	if s.Attrs&uv.AttrConceal != 0 {
		fg = "transparent"
	}
	if fg != "" {
		b.WriteString("color:" + fg + ";")
	}
	if bg != "" {
		b.WriteString("background:" + bg + ";")
	}
	if s.Attrs&uv.AttrBold != 0 {
		b.WriteString("font-weight:bold;")
	}
	if s.Attrs&uv.AttrFaint != 0 {
		b.WriteString("opacity:.6;")
	}
	if s.Attrs&uv.AttrItalic != 0 {
		b.WriteString("font-style:italic;")
	}
	var deco []string
	if s.Underline != uv.UnderlineNone {
		deco = append(deco, "underline")
	}
	if s.Attrs&uv.AttrStrikethrough != 0 {
		deco = append(deco, "line-through")
	}
	if len(deco) > 0 {
		b.WriteString("text-decoration:" + strings.Join(deco, " ") + ";")
	}
	return b.String()
}

// palette is the console's 16 colours, readable on its dark background
// (the classic VGA values are not: blue is #000080).
var palette = [16]string{
	"#1d2330", "#e05561", "#8cc265", "#d18f52", "#4aa5f0", "#c162de", "#42b3c2", "#d8dee9",
	"#5c6370", "#ff616e", "#a5e075", "#f0a45d", "#4dc4ff", "#de73ff", "#4cd1e0", "#ffffff",
}

// hexOf is a colour as #rrggbb ("" for the default).
func hexOf(c color.Color) string {
	switch c := c.(type) {
	case nil:
		return ""
	case ansi.BasicColor:
		if c < 16 {
			return palette[c]
		}
	case ansi.IndexedColor:
		if c < 16 {
			return palette[c]
		}
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
