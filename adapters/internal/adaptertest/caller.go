package adaptertest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Caller makes raw calls to a provider's API at base, authorised by the
// header name: value (what the tests use to make a sandbox outside
// Paddock). A call answers the status and the body; a transport failure
// fails the test.
func Caller(t testing.TB, base, name, value string) func(method, path, body string) (int, []byte) {
	return func(method, path, body string) (int, []byte) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(name, value)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, data
	}
}
