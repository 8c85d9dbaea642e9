//go:build linux

package inotify_test

import (
	"encoding/binary"
	"testing"

	"github.com/paddockhq/paddock/internal/inotify"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// record lays out one inotify record as the kernel does: the header, then
// the name padded with NULs to pad bytes.
func record(wd int32, mask uint32, name string, pad int) []byte {
	b := make([]byte, unix.SizeofInotifyEvent+pad)
	binary.NativeEndian.PutUint32(b[0:], uint32(wd))
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(pad))
	copy(b[unix.SizeofInotifyEvent:], name)
	return b
}

// Records reads every whole record in order, names without their padding,
// stops when asked, and leaves a record cut short alone.
func TestRecords(t *testing.T) {
	t.Parallel()
	buf := append(record(1, unix.IN_CREATE, "a.txt", 16), record(1, unix.IN_MODIFY, "line\nbreak", 16)...)
	buf = append(buf, record(1, unix.IN_DELETE_SELF, "", 0)...)
	var got []inotify.Record
	require.True(t, inotify.Records(buf, func(r inotify.Record) bool { got = append(got, r); return true }))
	require.Len(t, got, 3)
	require.Equal(t, "a.txt", string(got[0].Name))
	require.Equal(t, uint32(unix.IN_MODIFY), got[1].Mask)
	require.Equal(t, "line\nbreak", string(got[1].Name))
	require.Empty(t, got[2].Name, "the directory's own record has no name")

	n := 0
	require.False(t, inotify.Records(buf, func(inotify.Record) bool { n++; return false }))
	require.Equal(t, 1, n, "stops when asked")

	n = 0
	require.True(t, inotify.Records(buf[:len(buf)-1], func(inotify.Record) bool { n++; return true }))
	require.Equal(t, 2, n, "a record cut short is not read")
}
