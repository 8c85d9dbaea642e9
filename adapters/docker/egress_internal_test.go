package docker

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A kept policy's line decodes to its list; none kept ("null") and a
// record that does not decode, or names something that is not a domain,
// deny everything.
func TestDecodePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line  string
		allow []string
		bad   bool
	}{
		{line: "null"},
		{line: `{"allow":[]}`, allow: []string{}},
		{line: `{"allow":["pypi.org","*.github.com"]}`, allow: []string{"pypi.org", "*.github.com"}},
		{line: `{"allow":["pypi.org"`, bad: true},
		{line: `{"allow":["https://pypi.org/"]}`, bad: true},
		{line: ``, bad: true},
	} {
		allow, err := decodePolicy(tc.line)
		if tc.bad {
			require.Error(t, err, tc.line)
			assert.Empty(t, allow, tc.line)
			continue
		}
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.allow, allow, tc.line)
	}
}

// readLine takes a line up to its bound, across the reader's buffer, and
// refuses a longer one.
func TestReadLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10000) + "\n"
	br := bufio.NewReaderSize(strings.NewReader(long+"ready\n"+long), 16)
	line, err := readLine(br, 20000)
	require.NoError(t, err)
	assert.Equal(t, long, line)
	line, err = readLine(br, 6)
	require.NoError(t, err)
	assert.Equal(t, "ready\n", line)
	_, err = readLine(br, 5000)
	require.ErrorContains(t, err, "longer than 5000 bytes")
}
