package spritestest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// call makes one authorised request and returns the status and body.
func call(t *testing.T, srv *spritestest.Server, method, path, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(data), res.Header
}

// The filesystem routes answer as Sprites' Go client reads them: list
// gives a directory's entries (or a file alone) with octal modes and
// isDir; delete refuses a directory with entries unless recursive; rename,
// copy and chmod take JSON bodies; absence is 404 with an ENOENT code.
func TestFilesystemRoutes(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	base := "/v1/sprites/box/fs/"
	status, _, _ := call(t, srv, http.MethodPut, base+"write?path=/d/a.txt&mode=0640&mkdirParents=true", "abc")
	require.Equal(t, http.StatusOK, status)

	type entry struct {
		Name  string `json:"name"`
		Path  string `json:"path"`
		Type  string `json:"type"`
		Size  int64  `json:"size"`
		Mode  string `json:"mode"`
		IsDir bool   `json:"isDir"`
	}
	list := func(p string) (int, []entry) {
		status, body, _ := call(t, srv, http.MethodGet, base+"list?path="+p, "")
		var got struct {
			Path    string  `json:"path"`
			Entries []entry `json:"entries"`
			Count   int     `json:"count"`
		}
		if status == http.StatusOK {
			require.NoError(t, json.Unmarshal([]byte(body), &got))
			require.Equal(t, len(got.Entries), got.Count)
		}
		return status, got.Entries
	}
	status, entries := list("/d")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, []entry{{Name: "a.txt", Path: "/d/a.txt", Type: "file", Size: 3, Mode: "0640"}}, entries)
	status, entries = list("/d/a.txt")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "/d/a.txt", entries[0].Path, "a file lists itself")

	status, body, _ := call(t, srv, http.MethodPost, base+"copy", `{"source":"/d","dest":"/e","recursive":true}`)
	require.Equal(t, http.StatusOK, status, body)
	status, body, _ = call(t, srv, http.MethodPost, base+"copy", `{"source":"/d","dest":"/f"}`)
	require.Equal(t, http.StatusBadRequest, status, "a directory is copied only recursively")
	require.Contains(t, body, `"code":"EISDIR"`)
	status, _, _ = call(t, srv, http.MethodPost, base+"chmod", `{"path":"/e/a.txt","mode":"0600"}`)
	require.Equal(t, http.StatusOK, status)
	_, entries = list("/e")
	require.Equal(t, "0600", entries[0].Mode)
	status, _, _ = call(t, srv, http.MethodPost, base+"rename", `{"source":"/e/a.txt","dest":"/e/b.txt"}`)
	require.Equal(t, http.StatusOK, status)
	b, ok := srv.File("box", "/e/b.txt")
	require.True(t, ok)
	require.Equal(t, "abc", string(b))

	status, body, _ = call(t, srv, http.MethodDelete, base+"delete?path=/e", "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `"code":"ENOTEMPTY"`)
	status, _, _ = call(t, srv, http.MethodDelete, base+"delete?path=/e&recursive=true", "")
	require.Equal(t, http.StatusOK, status)
	for _, absent := range []struct{ method, path, body string }{
		{http.MethodGet, base + "list?path=/e", ""},
		{http.MethodDelete, base + "delete?path=/e", ""},
		{http.MethodPost, base + "rename", `{"source":"/e","dest":"/g"}`},
		{http.MethodPost, base + "copy", `{"source":"/e","dest":"/g"}`},
		{http.MethodPost, base + "chmod", `{"path":"/e","mode":"0755"}`},
	} {
		status, body, _ := call(t, srv, absent.method, absent.path, absent.body)
		require.Equal(t, http.StatusNotFound, status, absent.path)
		require.Contains(t, body, `"code":"ENOENT"`)
	}
}

// A checkpoint listing with a history filter answers text, which Sprites'
// Go client refuses; without one it is JSON.
func TestCheckpointHistoryIsText(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	status, body, header := call(t, srv, http.MethodGet, "/v1/sprites/box/checkpoints?history=v0", "")
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.HasPrefix(header.Get("Content-Type"), "text/plain"))
	require.True(t, strings.HasPrefix(body, "v0"), body)
	status, _, header = call(t, srv, http.MethodGet, "/v1/sprites/box/checkpoints", "")
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.HasPrefix(header.Get("Content-Type"), "application/json"))
}

// chown gives a file (or with recursive a tree) to a user and group named
// by id or by the sprite's names; it is applied where the server runs as
// root. An unknown name or a negative id is 400 EINVAL, absence 404.
func TestChown(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	writeFiles(t, srv, "/home/sprite/d/a", "/home/sprite/d/e/b")
	owner := func(p string) string { return runIn(t, srv, "stat", "-c", "%u:%g", p) }
	status, body, _ := call(t, srv, http.MethodPost, "/v1/sprites/box/fs/chown", `{"path":"d","workingDir":"/home/sprite","uid":"root","gid":0,"recursive":true}`)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"path":"/home/sprite/d","uid":0,"gid":0}`, body)
	if os.Geteuid() == 0 {
		require.Equal(t, "0:0\n", owner("/home/sprite/d/e/b"), "recursive")
		status, body, _ = call(t, srv, http.MethodPost, "/v1/sprites/box/fs/chown", `{"path":"/home/sprite/d/a","uid":"sprite"}`)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "1000:0\n", owner("/home/sprite/d/a"), "the uid alone")
	}
	for body, want := range map[string]int{
		`{"path":"/home/sprite/d","uid":"nobody-here"}`: http.StatusBadRequest,
		`{"path":"/home/sprite/d","uid":-2}`:            http.StatusBadRequest,
		`{"path":"/home/sprite/d"}`:                     http.StatusBadRequest,
		`{"uid":0}`:                                     http.StatusBadRequest,
		`{"path":"/home/sprite/absent","uid":0}`:        http.StatusNotFound,
	} {
		status, got, _ := call(t, srv, http.MethodPost, "/v1/sprites/box/fs/chown", body)
		require.Equal(t, want, status, body+": "+got)
	}
}

// writeFiles writes "x" to each path of sprite box, making its parents.
func writeFiles(t *testing.T, srv *spritestest.Server, paths ...string) {
	t.Helper()
	for _, p := range paths {
		status, body, _ := call(t, srv, http.MethodPut, "/v1/sprites/box/fs/write?mkdir=true&path="+p, "x")
		require.Equal(t, http.StatusOK, status, body)
	}
}
