package conformance

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// bigFileSize is the payload that must stream through intact.
const bigFileSize = 4 << 20

// 21. Files written are read back byte for byte; parent directories are
// created; 4 MiB streams through intact; an absent file is not_found.
func filesRoundTrip(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)

	small := []byte("hello, file\n")
	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance/small.txt", 0o644, bytes.NewReader(small)))
	require.Equal(t, small, readAll(t, s, h, "/tmp/conformance/small.txt"))

	deep := "/tmp/conformance/a/b/c/deep.txt"
	require.NoError(t, s.a.WriteFile(ctx, h, deep, 0o600, bytes.NewReader([]byte("deep"))), "parents are created")
	require.Equal(t, []byte("deep"), readAll(t, s, h, deep))

	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance/small.txt", 0o644, bytes.NewReader([]byte("new"))))
	require.Equal(t, []byte("new"), readAll(t, s, h, "/tmp/conformance/small.txt"), "a write replaces the file")

	want := sha256.New()
	src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{7}), bigFileSize), want)
	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance/big.bin", 0o644, src))
	rc, err := s.a.ReadFile(ctx, h, "/tmp/conformance/big.bin")
	require.NoError(t, err)
	got := sha256.New()
	n, err := io.Copy(got, rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.EqualValues(t, bigFileSize, n)
	require.Equal(t, want.Sum(nil), got.Sum(nil), "4 MiB read back intact")

	_, err = s.a.ReadFile(ctx, h, "/tmp/conformance/absent.txt")
	requireKind(t, err, paddock.ErrNotFound, "ReadFile of an absent file")
}

func readAll(t testing.TB, s *suite, h paddock.Handle, path string) []byte {
	t.Helper()
	rc, err := s.a.ReadFile(s.ctx(t), h, path)
	require.NoError(t, err, "ReadFile(%s)", path)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}
