package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viCommandMode is true while busybox vi's status line says it is in
// command mode ("-"; "I" is insert mode).
const viCommandMode = `/^- /.test(document.querySelector('.view').term.text().split('\n').filter(l => l).pop())`

// TestTerminalInChromium drives the console's terminal as a user at a
// 1280x800 window would: a shell on a pseudo-terminal, typed into key by
// key. It leaves screenshots of ls --color and vi beside the console's.
func TestTerminalInChromium(t *testing.T) {
	tab, ctx, c, base := consolePage(t, 3*time.Minute)
	eval := func(expr string) any {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
		require.NoError(t, err)
		return v
	}
	// The newest view's terminal, its screen as text.
	const screen = `document.querySelector('.view').term.text()`
	waitScreen := func(what string, expr string) {
		t.Helper()
		err := chromedp.Do(ctx, poll(expr))
		if err != nil {
			// Read on the tab: the steps' context may be what ended.
			shown, _ := chromedp.Run(tab, chromedp.Evaluate[string](screen))
			t.Fatalf("%s: %v; the screen:\n%s", what, err, shown)
		}
	}
	typed := func(keys string, opts ...chromedp.KeyOption) chromedp.Action[chromedp.Void] {
		return chromedp.KeyEvent(keys, opts...)
	}
	ctrl := chromedp.KeyModifiers(chromedp.ModifierCtrl)
	shot := func(name string) {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()) // the 1280x800 window, as the user sees it
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(screenshotPath), 0o755))
		require.NoError(t, os.WriteFile(strings.Replace(screenshotPath, ".png", "-"+name+".png", 1), png, 0o644))
	}

	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.WaitVisible(css(`#providers li`)),
		poll(`(window.confirm = () => true, true)`),
		chromedp.SetValue(css(`#provider`), "local"),
		chromedp.SetValue(css(`#sandbox-name`), "term"),
		chromedp.Click(css(`#create-sandbox`)),
		chromedp.WaitVisible(css(`#sandboxes li[data-name="term"].selected`)),
		chromedp.Click(css(`#with-tty`)),
		chromedp.SetValue(css(`#command`), `bash --noprofile --norc`),
		chromedp.Click(css(`#run`)),
	))
	waitScreen("a prompt", `/[$#] ?$/m.test(`+screen+`)`)
	assert.Equal(t, true, eval(`document.activeElement === document.querySelector('.view .output')`), "the terminal has the keyboard")

	// The size the shell sees is the cells that fit, 80x24 or more at 1280x800.
	require.NoError(t, chromedp.Do(ctx, typed("stty size\r")))
	waitScreen("stty size", `/^\d+ \d+$/m.test(`+screen+`)`)
	size := regexp.MustCompile(`(?m)^(\d+) (\d+)$`).FindStringSubmatch(eval(screen).(string))
	rows, _ := strconv.Atoi(size[1])
	cols, _ := strconv.Atoi(size[2])
	assert.GreaterOrEqual(t, rows, 24, "rows at 1280x800")
	assert.GreaterOrEqual(t, cols, 80, "columns at 1280x800")
	assert.Equal(t, []any{float64(cols), float64(rows)}, eval(`(s => [s.cols, s.rows])(document.querySelector('.view').term.fit())`), "what the page measured")
	// A 1280x800 window whose browser takes 110 pixels for itself still
	// shows 80x24 (the page scrolls a little).
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 690)))
	assert.Equal(t, true, eval(`(s => s.cols >= 80 && s.rows >= 24)(document.querySelector('.view').term.fit())`), "%v", eval(`document.querySelector('.view').term.fit()`))
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)))

	// Colours, not their codes.
	require.NoError(t, chromedp.Do(ctx, typed("mkdir -p etc src && touch notes.txt && clear && ls --color=always\r")))
	waitScreen("ls --color draws a directory bold and coloured",
		`[...document.querySelectorAll('.view .screen .term-row span')].some(s => s.textContent === 'etc' && s.style.color !== '' && s.style.fontWeight === 'bold')`)
	assert.Regexp(t, `(?m)^etc +notes\.txt +src$`, eval(screen), "no raw colour code shows")
	shot("ls-color")

	// Tab completes a path.
	require.NoError(t, chromedp.Do(ctx, typed("echo /us"), typed(kb.Tab), typed("\r")))
	waitScreen("tab completion", `/^\/usr\/$/m.test(`+screen+`)`)

	// Ctrl-C stops sleep 100: the line typed after it runs at once.
	require.NoError(t, chromedp.Do(ctx, typed("sleep 100\r")))
	waitScreen("sleep runs", screen+`.includes('sleep 100')`)
	require.NoError(t, chromedp.Do(ctx, typed("c", ctrl), typed("echo after-$((6*7))\r")))
	waitScreen("Ctrl-C", `/^after-42$/m.test(`+screen+`)`)
	assert.Contains(t, eval(screen), "^C", "the terminal echoed the interrupt")

	// A paste arrives whole (bash asks for bracketed paste), its UTF-8 intact.
	require.NoError(t, chromedp.Do(ctx,
		poll(`(o => { const d = new DataTransfer(); d.setData('text/plain', 'echo pasted-€-中');
			o.dispatchEvent(new ClipboardEvent('paste', {clipboardData: d, bubbles: true, cancelable: true})); return true })(document.querySelector('.view .output'))`),
		typed("\r")))
	waitScreen("the paste", `/^pasted-€-中$/m.test(`+screen+`)`)

	// A long paste arrives whole, in pieces the server takes (one message
	// is at most 1 MiB), an emoji where a piece ends kept whole.
	var long strings.Builder
	for range 1023 {
		long.WriteString(strings.Repeat("a", 63) + "\n") // 64 UTF-16 units a line
	}
	long.WriteString(strings.Repeat("b", 63) + "😀\n") // the emoji's two units straddle the first piece's end
	// 1.2 MB in all: more than one message may hold.
	for i := range 100000 {
		fmt.Fprintf(&long, "line %d ț\n", i)
	}
	require.NoError(t, chromedp.Do(ctx, typed("stty -echo; cat > pasted.txt; stty echo\r"))) // no echo: the paste's path, not the screen's
	require.NoError(t, chromedp.Do(ctx,
		poll(`(o => { const d = new DataTransfer(); d.setData('text/plain', `+strconv.Quote(long.String())+`);
			o.dispatchEvent(new ClipboardEvent('paste', {clipboardData: d, bubbles: true, cancelable: true})); return true })(document.querySelector('.view .output'))`),
	))
	require.NoError(t, chromedp.Do(ctx, typed("d", ctrl), typed("echo pasted-$((3+4))\r")))
	waitScreen("cat ends", `/^pasted-7$/m.test(`+screen+`)`)
	assert.Equal(t, long.String(), readFile(t, c, base, "/pasted.txt"), "the paste, byte for byte")

	// Lines that scroll off the top are kept above the screen.
	require.NoError(t, chromedp.Do(ctx, typed("seq 1 300\r")))
	waitScreen("seq", `/^300$/m.test(`+screen+`)`)
	require.NoError(t, chromedp.Do(ctx, poll(`[...document.querySelectorAll('.view .scrollback .term-row')].some(r => r.textContent.trim() === '1')`)))

	// vi opens a file; the text typed is saved with :wq.
	require.NoError(t, chromedp.Do(ctx, typed("busybox vi note.txt\r")))
	waitScreen("vi starts", screen+`.includes('note.txt')`)
	require.NoError(t, chromedp.Do(ctx, typed("i"), typed("hello from vi"), typed(kb.Enter), typed("second line")))
	waitScreen("vi shows the text", screen+`.includes('second line')`)
	shot("vi")
	// vi tells Escape from the start of a key's sequence by the pause
	// after it, as a person makes: the test waits for command mode.
	require.NoError(t, chromedp.Do(ctx, typed(kb.Escape)))
	waitScreen("vi's command mode", viCommandMode)
	require.NoError(t, chromedp.Do(ctx, typed(":wq\r"), typed("echo vi-$((2+3))\r")))
	waitScreen("vi quits", `/^vi-5$/m.test(`+screen+`)`)
	assert.Equal(t, "hello from vi\nsecond line\n", readFile(t, c, base, "/note.txt"), "the file vi saved, read through the file API")

	// top draws, and quits with q.
	require.NoError(t, chromedp.Do(ctx, typed("busybox top\r")))
	waitScreen("top draws", screen+`.includes('PID') && `+screen+`.includes('Mem:')`)
	require.NoError(t, chromedp.Do(ctx, typed("q"), typed("echo top-$((1+1))\r")))
	waitScreen("top quits", `/^top-2$/m.test(`+screen+`)`)

	// A smaller window is a smaller terminal, and the shell sees it.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1000, 640)))
	smaller := eval(`(s => s.rows + " " + s.cols)(document.querySelector('.view').term.fit())`).(string)
	assert.NotEqual(t, size[0], smaller)
	require.NoError(t, chromedp.Do(ctx, poll(`(s => s.rows + " " + s.cols)(document.querySelector('.view').term.size) === `+strconv.Quote(smaller))))
	require.NoError(t, chromedp.Do(ctx, typed("clear; stty size\r")))
	waitScreen("stty size after the resize", `new RegExp('^'+`+strconv.Quote(smaller)+`+'$', 'm').test(`+screen+`)`)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), typed("exit\r")))
	waitScreen("the shell exits", `document.querySelector('.view .status').textContent === 'exit 0'`)

	// A detached terminal re-attaches to the same screen.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(`#command`), `busybox vi note.txt`),
		chromedp.Click(css(`#run`)),
	))
	waitScreen("vi starts again", screen+`.includes('second line')`)
	require.NoError(t, chromedp.Do(ctx, typed("G"), typed("o"), typed("third line, before the detach"), typed(kb.Escape)))
	waitScreen("vi shows the third line", screen+`.includes('before the detach')`)
	waitScreen("vi's command mode", viCommandMode)
	require.NoError(t, chromedp.Do(ctx, poll(`!document.querySelector('.view .detach').hidden`)))
	before := eval(screen).(string)
	session := eval(`document.querySelector('.view .status').textContent.replace(/^.*session /, '')`).(string)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`.view .detach`)),
		poll(`document.querySelector('.view .status').textContent.startsWith('detached')`),
		chromedp.Click(css(`#refresh-sessions`)),
		poll(`(b => b ? (b.click(), true) : false)(document.querySelector('#sessions li[data-session="`+session+`"] button.attach'))`),
	))
	waitScreen("the re-attached screen", screen+` === `+strconv.Quote(before))
	require.NoError(t, chromedp.Do(ctx, typed(":q!\r")))
	waitScreen("vi quits after the re-attach", `document.querySelector('.view .status').textContent === 'exit 0'`)
}

// readFile reads a file of the local sandbox "term" through the console's
// file API.
func readFile(t *testing.T, c *console, base, path string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/api/file?provider=local&name=term&path="+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	return string(body)
}
