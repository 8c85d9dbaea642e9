package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Writers and a reader at once (the race detector watches): every write is
// kept whole.
func TestWritesWhileRead(t *testing.T) {
	t.Parallel()
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("ab"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	require.Equal(t, strings.Repeat("ab", 400), b.String())
}
