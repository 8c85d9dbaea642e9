package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view is what one console view received over its socket.
type view struct {
	stdout   bytes.Buffer
	terminal serverMessage
	closed   error // how the socket ended after the terminal message
}

// runView opens a view of argv in the local demo sandbox and reads its
// socket to the end.
func runView(ctx context.Context, c *console, base string, argv []string) (view, error) {
	var v view
	header := http.Header{"Authorization": {"Bearer " + c.token}, "Origin": {base}}
	d := websocket.Dialer{}
	conn, _, err := d.DialContext(ctx, strings.Replace(base, "http", "ws", 1)+"/ws", header)
	if err != nil {
		return v, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(d)
	}
	if err := conn.WriteJSON(clientMessage{Op: "run", Provider: "local", Sandbox: "demo", Argv: argv}); err != nil {
		return v, err
	}
	for {
		var m serverMessage
		if err := conn.ReadJSON(&m); err != nil {
			return v, fmt.Errorf("after %d bytes, no terminal message: %w", v.stdout.Len(), err)
		}
		switch m.Type {
		case "stdout":
			v.stdout.WriteString(m.Data)
		case "exit", "error", "failed":
			v.terminal = m
			_, _, v.closed = conn.ReadMessage()
			return v, nil
		}
	}
}

// Every view gets all of its command's output, its exit, and then a normal
// close of the socket (never a dropped connection the page would read as
// trouble), with a hundred views running at once.
func TestSocketsDeliverEverythingThenCloseNormally(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t, func(c *console) { c.limits.perClient = 1000 }) // 100 views from one client
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.rt.Adapter(paddock.ProviderLocal).Create(ctx, "demo", paddock.CreateOpts{})
	require.NoError(t, err)
	var want bytes.Buffer
	for n := 1; n <= 20000; n++ {
		fmt.Fprintln(&want, n)
	}
	const views = 100
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	for i := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := runView(ctx, c, base, []string{"sh", "-c", "seq 1 20000; exit 3"})
			problem := ""
			var ce *websocket.CloseError
			switch {
			case err != nil:
				problem = err.Error()
			case v.terminal.Type != "exit" || v.terminal.Code != 3:
				problem = fmt.Sprintf("terminal %+v", v.terminal)
			case !bytes.Equal(v.stdout.Bytes(), want.Bytes()):
				problem = fmt.Sprintf("%d of %d bytes", v.stdout.Len(), want.Len())
			case !errors.As(v.closed, &ce) || ce.Code != websocket.CloseNormalClosure:
				problem = fmt.Sprintf("the socket ended with %v, not a normal close", v.closed)
			}
			if problem != "" {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("view %d: %s", i, problem))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Empty(t, failures, "%d of %d views went wrong; the first: %v", len(failures), views, failures[:min(len(failures), 5)])
}

// A view that detaches gets a normal close too, and its session runs on.
func TestADetachedSocketClosesNormally(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.rt.Adapter(paddock.ProviderLocal).Create(ctx, "demo", paddock.CreateOpts{})
	require.NoError(t, err)
	header := http.Header{"Authorization": {"Bearer " + c.token}, "Origin": {base}}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, strings.Replace(base, "http", "ws", 1)+"/ws", header)
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	require.NoError(t, conn.WriteJSON(clientMessage{Op: "run", Provider: "local", Sandbox: "demo",
		Argv: []string{"sh", "-c", "echo ready; exec cat"}, Stdin: true}))
	var started, out serverMessage
	require.NoError(t, conn.ReadJSON(&started))
	require.Equal(t, "started", started.Type)
	require.NoError(t, conn.ReadJSON(&out))
	require.Equal(t, serverMessage{Type: "stdout", Seq: 1, Data: "ready\n"}, out)

	require.NoError(t, conn.WriteJSON(clientMessage{Op: "detach"}))
	_, _, err = conn.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, websocket.CloseNormalClosure, ce.Code)

	// The session still runs: an attacher's stdin is echoed.
	st, err := c.rt.Adapter(paddock.ProviderLocal).Attach(ctx, paddock.Handle{Provider: paddock.ProviderLocal, Name: "demo"}, started.Session, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	again := st.(*actors.FrameStream)
	defer again.Close()
	require.NoError(t, again.WriteStdin(ctx, []byte("ping\n")))
	var seen string
	for !strings.Contains(seen, "ping") {
		select {
		case f, ok := <-again.C():
			require.True(t, ok, "the session ended; seen %q", seen)
			if o, isOut := f.(*messages.Stdout); isOut {
				seen += string(o.GetData())
			}
		case <-ctx.Done():
			require.Fail(t, "no echo", "seen %q", seen)
		}
	}
}

// dialView opens a console socket with the page's credentials and origin.
func dialView(ctx context.Context, c *console, base string) (*websocket.Conn, *http.Response, error) {
	header := http.Header{"Authorization": {"Bearer " + c.token}, "Origin": {base}}
	return (&websocket.Dialer{}).DialContext(ctx, strings.Replace(base, "http", "ws", 1)+"/ws", header)
}

// A socket that never sends its first message is closed by the console
// once the first-message wait is over, not held for ever.
func TestAnIdleSocketIsClosed(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t, func(c *console) { c.limits.firstMessage = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(50 * time.Second))
	_, _, err = conn.ReadMessage()
	require.Error(t, err)
	var timeout interface{ Timeout() bool }
	require.False(t, errors.As(err, &timeout) && timeout.Timeout(), "the console closed it, long before our own deadline: %v", err)
}

// One client holds at most perClient sockets; the next is refused with
// 429 before the upgrade, and a socket that ends frees its place.
func TestSocketsPerClientAreCapped(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t, func(c *console) { c.limits.perClient = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	second, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	defer second.Close()
	_, res, err := dialView(ctx, c, base)
	require.Error(t, err)
	require.NotNil(t, res)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		conn, _, err := dialView(ctx, c, base)
		if err == nil {
			_ = conn.Close()
		}
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "a closed socket frees its place")
}
