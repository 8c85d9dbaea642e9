package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/paddockhq/paddock/internal/providers"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageScreen is a terminal view's screen as the page keeps it: the rows
// the updates changed. It says "drawn" after each update, as the page does.
type pageScreen struct {
	conn *websocket.Conn
	rows map[int]string
	last map[string]any // the last message that was not a screen update
}

// read applies the socket's messages until the screen's text satisfies
// done, and answers the text.
func (p *pageScreen) read(t *testing.T, what string, done func(string) bool) string {
	t.Helper()
	for {
		text := p.text()
		if done(text) {
			return text
		}
		_, data, err := p.conn.ReadMessage()
		require.NoError(t, err, "%s; the screen:\n%s", what, text)
		var u screenUpdate
		require.NoError(t, json.Unmarshal(data, &u))
		if u.Type != "screen" {
			p.last = map[string]any{}
			require.NoError(t, json.Unmarshal(data, &p.last))
			continue
		}
		for y := range p.rows {
			if y >= u.Rows {
				delete(p.rows, y)
			}
		}
		for y, runs := range u.Changed {
			p.rows[y] = strings.TrimRight(runsText(runs), " ")
		}
		require.NoError(t, p.conn.WriteJSON(clientMessage{Op: "drawn"}))
	}
}

func (p *pageScreen) text() string {
	lines := make([]string, len(p.rows))
	for y, l := range p.rows {
		if y < len(lines) {
			lines[y] = l
		}
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// openTerminal sends a view's first message and reads its started message.
func openTerminal(ctx context.Context, t *testing.T, c *console, base string, first clientMessage) (*pageScreen, serverMessage) {
	t.Helper()
	conn, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(d)
	}
	require.NoError(t, conn.WriteJSON(first))
	var started serverMessage
	require.NoError(t, conn.ReadJSON(&started))
	require.Equal(t, "started", started.Type, "%+v", started)
	return &pageScreen{conn: conn, rows: map[int]string{}}, started
}

// A terminal view works the same on each provider with a terminal: keys
// reach the program, the screen is drawn (colour codes never show), and
// where the provider can re-attach a terminal the view is detachable and
// a view attached afterwards shows the same screen; where it cannot, the
// view says it is not detachable and the command runs as long as the view.
func TestTerminalViewOnEachProvider(t *testing.T) {
	t.Parallel()
	type provider struct {
		name       paddock.Provider
		adapter    func(t *testing.T) paddock.Adapter
		detachable bool
	}
	cases := []provider{
		{paddock.ProviderLocal, func(t *testing.T) paddock.Adapter {
			a, err := local.New(local.Config{Root: t.TempDir()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Close() })
			return a
		}, true},
		{paddock.ProviderSprites, func(t *testing.T) paddock.Adapter {
			srv := spritestest.NewServer(t)
			a, err := sprites.New(sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL()})
			require.NoError(t, err)
			return a
		}, true},
		{paddock.ProviderE2B, func(t *testing.T) paddock.Adapter {
			srv := e2btest.NewServer(t)
			a, err := e2b.New(e2b.Config{APIKey: paddock.NewSecret(srv.Key()), BaseURL: srv.URL(), EnvdURL: srv.URL()})
			require.NoError(t, err)
			return a
		}, false},
	}
	if os.Getenv("DOCKER_HOST") != "" { // CI's engine; elsewhere the docker tests say how to start one
		cases = append(cases, provider{paddock.ProviderDocker, func(t *testing.T) paddock.Adapter {
			d := providers.Docker(os.Getenv, zerolog.Nop(), nil)
			require.NotNil(t, d, "DOCKER_HOST is set but no engine answers")
			t.Cleanup(func() { _ = d.Close() })
			return d
		}, false})
	}
	for _, p := range cases {
		t.Run(string(p.name), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			a := p.adapter(t)
			reg := paddock.Registry{p.name: a}
			rt, err := actors.Start(actors.Config{Adapters: reg})
			require.NoError(t, err)
			c := newConsole(rt, reg, zerolog.Nop())
			base := serveConsole(t, c, func() {
				stopCtx, stopCancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer stopCancel()
				_ = rt.Shutdown(stopCtx)
			})
			h, err := a.Create(ctx, "term-"+strings.ToLower(string(p.name)), paddock.CreateOpts{})
			require.NoError(t, err)
			t.Cleanup(func() {
				destroyCtx, destroyCancel := context.WithTimeout(context.Background(), time.Minute)
				defer destroyCancel()
				_ = a.Destroy(destroyCtx, h)
			})

			script := `printf '\033[1;32mready\033[0m\n'; read x; printf '\033[2J\033[Hgot %s\n' "$x"; read y; exit 7`
			view, started := openTerminal(ctx, t, c, base, clientMessage{Op: "run", Provider: string(p.name), Sandbox: h.Name,
				Argv: []string{"sh", "-c", script}, TTY: true, Cols: 80, Rows: 24})
			assert.True(t, started.Terminal, "a terminal view")
			assert.Equal(t, defaultScrollback, started.Scrollback, "the page keeps the scrollback the console does")
			assert.Equal(t, p.detachable, started.Detachable, "detachable exactly where a terminal can be attached again")
			view.read(t, "the program's first line", func(s string) bool { return strings.HasPrefix(s, "ready") })
			require.NoError(t, view.conn.WriteJSON(clientMessage{Op: "stdin", Data: "hello\r"}))
			before := view.read(t, "the line typed", func(s string) bool { return strings.HasPrefix(s, "got hello") })
			assert.NotContains(t, before, "\x1b")

			if p.detachable {
				require.NoError(t, view.conn.WriteJSON(clientMessage{Op: "detach"}))
				_, _, err := view.conn.ReadMessage()
				for err == nil {
					_, _, err = view.conn.ReadMessage()
				}
				assert.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "a detach closes the view normally: %v", err)
				view, started = openTerminal(ctx, t, c, base, clientMessage{Op: "attach", Provider: string(p.name), Sandbox: h.Name,
					Session: started.Session, TTY: true, Cols: 80, Rows: 24})
				assert.True(t, started.Terminal)
				view.read(t, "the screen re-attached", func(s string) bool { return s == before })
			}
			require.NoError(t, view.conn.WriteJSON(clientMessage{Op: "stdin", Data: "bye\r"}))
			view.read(t, "the exit", func(string) bool { return view.last["type"] == "exit" || view.last["type"] == "error" })
			assert.Equal(t, "exit", view.last["type"], "%v", view.last)
			assert.EqualValues(t, 7, view.last["code"])
		})
	}
}

// A terminal asked for at a size no terminal has is refused with the
// taxonomy's invalid(term_size), and a resize to one is refused without
// touching the screen.
func TestTerminalViewRefusesBadSizes(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	ctx := localSandbox(t, c, "sizes", time.Minute)

	for _, size := range [][2]int{{5000, 24}, {1000, 1000}} { // beyond the contract; within it, beyond what the console draws
		conn, _, err := dialView(ctx, c, base)
		require.NoError(t, err)
		require.NoError(t, conn.WriteJSON(clientMessage{Op: "run", Provider: "local", Sandbox: "sizes", Argv: []string{"cat"}, TTY: true, Cols: size[0], Rows: size[1]}))
		var refused serverMessage
		require.NoError(t, conn.ReadJSON(&refused))
		assert.Equal(t, "failed", refused.Type, "%v", size)
		assert.Contains(t, refused.Detail, "term_size", "%v", size)
		_ = conn.Close()
	}

	view, started := openTerminal(ctx, t, c, base, clientMessage{Op: "run", Provider: "local", Sandbox: "sizes",
		Argv: []string{"sh", "-c", "stty size; cat"}, TTY: true, Cols: 100, Rows: 30})
	require.True(t, started.Terminal)
	view.read(t, "stty size", func(s string) bool { return strings.HasPrefix(s, "30 100") })
	for _, size := range [][2]int{{0, 0}, {-1, 10}, {100, 1001}, {1000, 1000}} {
		require.NoError(t, view.conn.WriteJSON(clientMessage{Op: "resize", Cols: size[0], Rows: size[1]}))
		var m serverMessage
		require.NoError(t, view.conn.ReadJSON(&m))
		assert.Equal(t, "failed", m.Type, "%v", size)
		assert.Contains(t, m.Detail, "term_size", "%v", size)
	}
	require.NoError(t, view.conn.WriteJSON(clientMessage{Op: "resize", Cols: 60, Rows: 10}))
	var u screenUpdate
	require.NoError(t, view.conn.ReadJSON(&u))
	assert.Equal(t, [2]int{60, 10}, [2]int{u.Cols, u.Rows}, "a good size after the bad ones")
}

// A program whose output the emulator fails on gets a note in its view
// and a blank screen that goes on drawing: the view, the socket and the
// console live on.
func TestTerminalViewOutlivesItsEmulator(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	ctx := localSandbox(t, c, "hostile", time.Minute)
	view, _ := openTerminal(ctx, t, c, base, clientMessage{Op: "run", Provider: "local", Sandbox: "hostile",
		Argv: []string{"sh", "-c", `printf '\033[;100r\033M'; read x; echo "survived $x"`}, TTY: true, Cols: 80, Rows: 24})
	view.read(t, "the note", func(string) bool { return view.last["type"] == "note" })
	assert.Contains(t, view.last["detail"], "starts again blank")
	require.NoError(t, view.conn.WriteJSON(clientMessage{Op: "stdin", Data: "still\r"}))
	view.read(t, "the screen after it", func(s string) bool { return strings.Contains(s, "survived still") })
}

// A page that has not drawn its last update is sent no other: the command
// runs on at the emulator's pace, and the page's next update is the screen
// as it is then. Here the page never says drawn: it gets the first screen,
// then the last one and the exit, the output whole on it.
func TestTerminalViewPacesToThePage(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	ctx := localSandbox(t, c, "paced", time.Minute)
	conn, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(clientMessage{Op: "run", Provider: "local", Sandbox: "paced",
		Argv: []string{"sh", "-c", "seq 1 20000; echo end"}, TTY: true, Cols: 80, Rows: 24}))
	var screens []screenUpdate
	for {
		_, data, err := conn.ReadMessage()
		require.NoError(t, err)
		var m serverMessage
		require.NoError(t, json.Unmarshal(data, &m))
		if m.Type == "screen" {
			var u screenUpdate
			require.NoError(t, json.Unmarshal(data, &u))
			screens = append(screens, u)
		}
		if m.Type == "exit" {
			assert.Equal(t, int32(0), m.Code)
			break
		}
	}
	require.Len(t, screens, 2, "the first screen, then the last")
	last := screens[1]
	assert.Equal(t, "end", strings.TrimSpace(runsText(last.Changed[last.CursorY-1])), "the last screen shows the end")
	assert.Equal(t, "20000", strings.TrimSpace(runsText(last.Changed[last.CursorY-2])))
	assert.Len(t, last.Scrolled, defaultScrollback, "the lines that scrolled off meanwhile, at most those kept")
}
