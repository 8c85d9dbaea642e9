package audited_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/examples/custom-adapter/audited"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is an audit log tests can read while the adapter writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The whole contract, proven the way every adapter in the tree proves it.
func TestConformance(t *testing.T) {
	inner := fake.New()
	t.Cleanup(inner.Reset)
	conformance.Run(t, conformance.Config{Adapter: audited.New(inner, &syncBuffer{}), Fixtures: conformance.FakeFixtures()})
}

// Each operation leaves one audit line naming it and the sandbox, and
// nothing of the command it ran.
func TestAuditLines(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	a := audited.New(fake.New(), &log)
	ctx := context.Background()
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, audited.Provider, h.Provider)
	_, err = a.Exec(ctx, h, paddock.NewCmd("emit", "out:token=s3cr3t"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.NoError(t, a.Destroy(ctx, h))
	var ops []string
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		fields := strings.Fields(line)
		require.Len(t, fields, 3, line)
		ops = append(ops, fields[1]+" "+fields[2])
	}
	assert.Equal(t, []string{"create box", "exec box", "destroy box"}, ops)
	assert.NotContains(t, log.String(), "s3cr3t")
}
