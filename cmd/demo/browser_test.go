package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/browsertest"
	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// screenshotPath is where the browser test leaves its screenshot: the repo's
// test output folder (ignored by git).
var screenshotPath = filepath.Join("..", "..", "artifacts", "demo-console.png")

// consolePage opens a console's page in a fresh Chromium: the tab, a
// context that bounds the steps after the first (which starts the browser
// and takes no timeout, as it would bound the browser's life), the console
// and its base URL.
func consolePage(t *testing.T, steps time.Duration) (tab, ctx context.Context, c *console, base string) {
	t.Helper()
	tab = browsertest.Tab(t)
	c, base = startConsole(t)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(c.url(strings.TrimPrefix(base, "http://")))))
	ctx, cancel := context.WithTimeout(tab, steps)
	t.Cleanup(cancel)
	return tab, ctx, c, base
}

// css is chromedp's selector, shorter; poll is chromedp's poll bounded by
// the test's context alone (its own 30 s default would be a verdict on a
// slow machine, not a hang's bound).
func css(s string) chromedp.CSS { return chromedp.CSS(s) }

func poll(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(0))
}

// TestConsoleInChromium drives the console like a first-time user.
func TestConsoleInChromium(t *testing.T) {
	tab1, ctx, _, base := consolePage(t, 90*time.Second)
	text := func(ctx context.Context, sel string) string {
		v, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
		require.NoError(t, err)
		return v
	}
	eval := func(ctx context.Context, expr string) any {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
		require.NoError(t, err)
		return v
	}

	longRun := `sh -c 'for i in $(seq 1 2000); do echo line-$i; done; for i in $(seq 1 20); do echo err-$i >&2; done; exit 3'`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(css(`#providers li`)),
		// Every destructive click asks first; the test answers yes and
		// keeps what was asked.
		poll(`(window.asked = [], window.confirm = (m) => (window.asked.push(m), true), true)`),
		chromedp.SetValue(css(`#provider`), "local"),
		// A name the provider refuses is said on the page, not swallowed.
		chromedp.SetValue(css(`#sandbox-name`), "bad/name"),
		chromedp.Click(css(`#create-sandbox`)),
		poll(`document.querySelector('#sandbox-status').textContent.includes('sandbox_name')`),
		chromedp.SetValue(css(`#sandbox-name`), "ui"),
		chromedp.Click(css(`#create-sandbox`)),
		chromedp.WaitVisible(css(`#sandboxes li[data-name="ui"].selected`)),
		chromedp.SetValue(css(`#command`), longRun),
		chromedp.Click(css(`#run`)),
		chromedp.WaitVisible(css(`.view .status.exit-nonzero`)),
	))
	assert.Equal(t, "exit 3", text(ctx, `.view .status`))
	assert.Equal(t, "local/ui", text(ctx, `.view .sandbox`), "a view's header names its sandbox")
	assert.Empty(t, text(ctx, `#sandbox-status`), "a success clears the last failure")
	assert.EqualValues(t, 2000, eval(ctx, `document.querySelectorAll('.view .line.stdout').length`))
	assert.Equal(t, "line-2000", eval(ctx, `[...document.querySelectorAll('.view .line.stdout')].pop().textContent`), "the page shows line 2,000")
	assert.EqualValues(t, 20, eval(ctx, `document.querySelectorAll('.view .line.stderr').length`), "the stderr lines are marked as stderr")
	// The live panel counts what streamed (the runtime's metrics).
	require.NoError(t, chromedp.Do(ctx, poll(`document.querySelector('#live-bytes').textContent.endsWith('KiB')`)))
	assert.NotEqual(t, "0", text(ctx, `#live-sandboxes`))

	// The network policy panel, where the provider enforces policies (the
	// local adapter in isolation, as in CI): the list applied is shown
	// and enforced, an empty list denies everything.
	if eval(ctx, `capabilities.local.includes('network_policy')`) == true {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.WaitVisible(css(`#policy-panel`)),
			poll(`document.querySelector('#policy-state').textContent === 'none applied from this console'`),
			poll(`(document.querySelector('#policy-allow').value = "pkg.test\n *.example.test \n\n", true)`), // a textarea, which SetValue does not fill
			chromedp.Click(css(`#policy-apply`)),
			poll(`document.querySelector('#policy-state').textContent === '2 allowed'`),
		))
		assert.Equal(t, "pkg.test\n*.example.test", eval(ctx, `document.querySelector('#policy-allow').value`))
		// A denied name is refused by the policy; an allowed one is
		// followed (and fails only because this machine cannot resolve it).
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(css(`#command`), `sh -c 'curl -sS https://denied.test/ 2>&1; curl -sS https://pkg.test/ 2>&1; true'`),
			chromedp.Click(css(`#run`)),
			poll(`document.querySelector('.view .status').textContent === 'exit 0'`),
		))
		out := text(ctx, `.view .output`)
		assert.Contains(t, out, "response 403", "denied.test is not in the list")
		assert.Contains(t, out, "response 502", "pkg.test is, and is followed")
		require.NoError(t, chromedp.Do(ctx,
			poll(`(document.querySelector('#policy-allow').value = "not a domain/", true)`),
			chromedp.Click(css(`#policy-apply`)),
			poll(`document.querySelector('#policy-status').textContent.includes('network_policy')`),
			poll(`(document.querySelector('#policy-allow').value = "", true)`),
			chromedp.Click(css(`#policy-apply`)),
			poll(`document.querySelector('#policy-state').textContent === 'all egress denied'`),
		))
		assert.Empty(t, text(ctx, `#policy-status`), "a success clears the last failure")
	} else if os.Getenv("CI") != "" {
		t.Fatal("CI's local adapter isolates sandboxes: it must offer network policies")
	}

	// The file panel: upload a file into the sandbox, see it listed,
	// download it byte-equal, delete it.
	payload := make([]byte, 300<<10)
	for i := range payload {
		payload[i] = byte(i*7 + i/251) // every byte value, no pattern a text path would keep
	}
	upload := filepath.Join(t.TempDir(), "payload.bin")
	require.NoError(t, os.WriteFile(upload, payload, 0o644))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(`#files-path`), "/"),
		chromedp.Click(css(`#files-open`)),
		poll(`document.querySelector('#files-status').textContent.endsWith('entries in /')`),
		chromedp.SetUploadFiles(css(`#upload-file`), []string{upload}),
		chromedp.Click(css(`#upload`)),
		poll(`document.querySelector('#files li[data-name="payload.bin"]') !== null`),
	))
	assert.Equal(t, "307200", text(ctx, `#files li[data-name="payload.bin"] .size`))
	downloaded, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector('#files li[data-name="payload.bin"] a.download').href, {headers: authHeaders()})
		.then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b), x => x.toString(16).padStart(2, "0")).join(""))`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(payload), downloaded, "the download is the upload, byte for byte")
	require.NoError(t, chromedp.Do(ctx,
		poll(`(b => b ? (b.click(), true) : false)(document.querySelector('#files li[data-name="payload.bin"] button.delete'))`),
		poll(`document.querySelector('#files li[data-name="payload.bin"]') === null && document.querySelector('#files-status').textContent.includes('entries')`),
	))
	assert.Equal(t, "Delete /payload.bin?", eval(ctx, `window.asked[window.asked.length-1]`), "a delete asks first")
	_, err = os.Stat(upload)
	require.NoError(t, err, "the local file is untouched")

	// A long-running session, started in the first tab.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(`#command`), `sh -c 'echo ready; exec cat'`),
		chromedp.Click(css(`#with-stdin`)),
		chromedp.Click(css(`#run`)),
		poll(`document.querySelector('.view .status').textContent.includes('session')`),
	))

	// A second tab attaches to it.
	tab2, cancelTab2 := chromedp.NewContext(tab1)
	defer cancelTab2()
	require.NoError(t, chromedp.Do(tab2, chromedp.Navigate(base+"/")))
	ctx2, cancel2 := context.WithTimeout(tab2, 60*time.Second)
	defer cancel2()
	require.NoError(t, chromedp.Do(ctx2,
		chromedp.WaitVisible(css(`#providers li`)),
		chromedp.SetValue(css(`#provider`), "local"),
		poll(`document.querySelector('#provider').dispatchEvent(new Event('change'))`),
		// Clicked through the page's own lookup: the list re-renders as it
		// refreshes, and a node chromedp found may be gone by its click.
		poll(`(b => b ? (b.click(), true) : false)(document.querySelector('#sandboxes li[data-name="ui"] button.select'))`),
		poll(`[...document.querySelectorAll('#sessions li')].some(li => li.textContent.includes('exec cat'))`),
	))
	assert.Equal(t, "running", eval(ctx2, catSession+`.querySelector('.state').textContent`), "the sessions list says the session runs")
	require.NoError(t, chromedp.Do(ctx2,
		poll(catSession+`.querySelector('button.attach').click() || true`),
		poll(`document.querySelector('.view .output')?.textContent.includes('ready')`),
	))
	assert.Equal(t, "ready", strings.TrimSpace(text(ctx2, `.view .output`)), "the replay from the start")
	require.NoError(t, chromedp.Do(ctx2,
		chromedp.SetValue(css(`.view .stdin-input`), "ping"),
		chromedp.Click(css(`.view .send`)),
		poll(`document.querySelector('.view .output').textContent.includes('ping')`),
	))
	assert.Equal(t, "readyping", strings.ReplaceAll(text(ctx2, `.view .output`), "\n", ""), "stdin echoed live")
	require.NoError(t, chromedp.Do(ctx2,
		chromedp.Click(css(`.view .terminate`)),
		poll(`!document.querySelector('.view .status').classList.contains('running')`),
	))
	assert.Equal(t, "exit 143", text(ctx2, `.view .status`), "the terminal frame after a graceful terminate (SIGTERM)")
	require.NoError(t, chromedp.Do(ctx2,
		chromedp.Click(css(`#refresh-sessions`)),
		poll(catSession+`.querySelector('.state').textContent === 'exit 143'`),
	), "the sessions list shows the exit code of the session that ended")

	// A view that detaches says so, and a view closes.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(`#command`), `sh -c 'echo up; exec cat'`),
		chromedp.Click(css(`#run`)),
		poll(`document.querySelector('.view .status').textContent.includes('session')`),
		chromedp.Click(css(`.view .detach`)),
		poll(`document.querySelector('.view .status').textContent.startsWith('detached')`),
	))
	views := eval(ctx, `document.querySelectorAll('.view').length`).(float64)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`.view .close-view`)),
		poll(`document.querySelectorAll('.view').length === `+strconv.Itoa(int(views)-1)),
	))

	// Checkpoints: one taken of local/ui, its file changed, restored; a
	// fork (named at the prompt) holds the checkpoint's file and becomes
	// the selected sandbox.
	run := func(command string) string {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(css(`#command`), command),
			chromedp.Click(css(`#run`)),
			poll(`!document.querySelector('.view .status').classList.contains('running') && document.querySelector('.view .status').textContent !== 'starting'`),
		))
		require.Equal(t, "exit 0", text(ctx, `.view .status`), command)
		return text(ctx, `.view .output`)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`#checkpoints-panel`))))
	run(`sh -c 'echo v1 > state.txt'`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(`#checkpoint-comment`), "v1 saved"),
		chromedp.Click(css(`#checkpoint-create`)),
		poll(`[...document.querySelectorAll('#checkpoints li')].some(li => li.textContent.includes('v1 saved'))`),
	))
	assert.Contains(t, run(`sh -c 'echo v2 > state.txt; cat state.txt'`), "v2")
	require.NoError(t, chromedp.Do(ctx,
		poll(`(b => b ? (b.click(), true) : false)(document.querySelector('#checkpoints li button.restore'))`),
		poll(`document.querySelector('#checkpoints-note').textContent.startsWith('Restored "v1 saved"')`),
	))
	assert.True(t, strings.HasPrefix(eval(ctx, `window.asked[window.asked.length-1]`).(string), "Restore local/ui"), "a restore asks first")
	assert.Contains(t, run(`cat state.txt`), "v1", "the restore brought the checkpoint's file back")
	require.NoError(t, chromedp.Do(ctx,
		poll(`(window.prompt = () => 'ui-fork', true)`),
		poll(`(b => b ? (b.click(), true) : false)(document.querySelector('#checkpoints li button.fork'))`),
		poll(`document.querySelector('#current-sandbox').textContent === 'local/ui-fork'`),
	))
	assert.Contains(t, run(`cat state.txt`), "v1", "the fork holds the checkpoint's file")
	assert.Equal(t, "local/ui-fork", text(ctx, `.view .sandbox`))

	require.NoError(t, os.MkdirAll(filepath.Dir(screenshotPath), 0o755))
	for path, tab := range map[string]context.Context{screenshotPath: ctx2, strings.Replace(screenshotPath, ".png", "-run.png", 1): ctx} {
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100)) // quality 100 encodes PNG
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, png, 0o644))
	}
	abs, _ := filepath.Abs(screenshotPath)
	t.Logf("screenshots: %s and its -run twin", abs)
}

// catSession finds the sessions list's entry of the session running cat.
const catSession = `[...document.querySelectorAll('#sessions li')].find(li => li.textContent.includes('exec cat'))`

// answers records the status of every /api/ request a handler answers.
type answers struct {
	mu   sync.Mutex
	seen []string // "METHOD /path?query STATUS"
}

func (a *answers) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if strings.HasPrefix(r.URL.Path, "/api/") {
			a.mu.Lock()
			a.seen = append(a.seen, fmt.Sprintf("%s %s %d", r.Method, r.URL.RequestURI(), rec.status))
			a.mu.Unlock()
		}
	})
}

func (a *answers) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// A page served from another port of 127.0.0.1 cannot change anything in
// the console: a no-cors fetch and an auto-submitted form both reach the
// console and are refused, and no sandbox is made. Nor does it receive the
// console's token: a browser sends the cookies of 127.0.0.1 to every port
// of it, and the console sets none.
func TestAnotherPortCannotChangeState(t *testing.T) {
	tab := browsertest.Tab(t)
	rt, reg, stop, err := startRuntime(t.TempDir(), zerolog.Nop(), nil)
	require.NoError(t, err)
	t.Cleanup(stop)
	c := newConsole(rt, reg, zerolog.Nop())
	var seen answers
	console := httptest.NewServer(seen.wrap(c.handler()))
	t.Cleanup(console.Close)
	target := console.URL + "/api/sandboxes"
	page := `<!doctype html><title>start;</title>
<form id="f" method="POST" action="` + target + `" target="sink" enctype="text/plain">
<input name='{"Provider":"local","Name":"evil-form","x":"' value='"}'></form>
<iframe name="sink" id="sink"></iframe>
<script>
document.getElementById('sink').onload = () => { document.title += 'submitted;' };
fetch(` + strconv.Quote(target) + `, {method: 'POST', mode: 'no-cors', credentials: 'include',
  body: JSON.stringify({Provider: 'local', Name: 'evil-fetch'})})
  .finally(() => { document.title += 'fetched;' });
document.getElementById('f').submit();
</script>`
	var heard syncbuf.Buffer // every header line the other port receives
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		_ = r.Header.Write(&b)
		_, _ = heard.Write([]byte(b.String()))
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(attacker.Close)
	require.NotEqual(t, console.URL, attacker.URL)

	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(c.url(strings.TrimPrefix(console.URL, "http://")))))
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#providers li`)), // the console's page, with its token
		chromedp.Navigate(attacker.URL),
		poll(`document.title.includes('fetched;') && document.title.includes('submitted;')`),
	))
	var posts []string
	for _, a := range seen.list() {
		if strings.HasPrefix(a, "POST ") {
			posts = append(posts, a)
		}
	}
	assert.Equal(t, []string{"POST /api/sandboxes 403", "POST /api/sandboxes 403"}, posts, "both attempts reached the console and were refused")
	names, err := rt.Adapter(paddock.ProviderLocal).ListAllNames(ctx)
	require.NoError(t, err)
	assert.NotContains(t, names, "evil-fetch")
	assert.NotContains(t, names, "evil-form")
	assert.Contains(t, heard.String(), "User-Agent", "the other port was visited")
	assert.NotContains(t, heard.String(), c.token, "no request to another port carries the console's token")
}
