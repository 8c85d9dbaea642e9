package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paddockhq/paddock/internal/browsertest"
	"github.com/stretchr/testify/require"
)

// A page of an allowed origin drives paddockd from a real browser: its
// fetch calls (Connect's JSON, with the bearer token, after the browser's
// preflight) create a sandbox and run a command in it; a page of another
// origin is refused by its browser.
func TestABrowserOfAnAllowedOrigin(t *testing.T) {
	t.Parallel()
	tab := browsertest.Tab(t)
	page := func() *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("<!doctype html><title>app</title>"))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	app, other := page(), page()
	tokens := filepath.Join(t.TempDir(), "tokens")
	const token = "browser-token-0123456789"
	require.NoError(t, os.WriteFile(tokens, []byte(token+"\n"), 0o600))
	addr, _ := start(t, "-tokens-file", tokens, "-allow-origins", app.URL)

	// Create, then Exec: what the page's script answers.
	script := `(async () => {
	  const call = async (rpc, body) => {
	    const res = await fetch("http://` + addr + `/paddock.messages.v1.Paddock/" + rpc, {method: "POST",
	      headers: {"Content-Type": "application/json", "Authorization": "Bearer ` + token + `"}, body: JSON.stringify(body)});
	    return [res.status, await res.json()];
	  };
	  try {
	    const [created, c] = await call("Create", {provider: "fake", name: "from-a-browser"});
	    const [ran, r] = await call("Exec", {handle: c.handle, cmd: {path: "x", args: ["out:hello from a browser"]}});
	    return created + " " + ran + " " + atob(r.stdout);
	  } catch (e) {
	    return "refused: " + e.name;
	  }
	})()`
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(app.URL)))
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, "200 200 hello from a browser", got)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(other.URL)))
	got, err = chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, "refused: TypeError", got, "another origin's page is refused by its browser")
}
