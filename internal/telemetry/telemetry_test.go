package telemetry

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A detail becomes a label only as the contract's token: its prose never
// does, so the label set stays bounded.
func TestDetailToken(t *testing.T) {
	t.Parallel()
	for detail, want := range map[string]string{
		"":                             "",
		paddock.DetailClosedBeforeExit: "closed_before_exit",
		"create_options: limits must be positive": "create_options",
		"docker: image x is not on the engine":    "other",
		"sandbox my-secret-name is gone":          "other",
	} {
		assert.Equal(t, want, DetailToken(detail), detail)
	}
}

// Off is a nil *Telemetry: every method is safe and does nothing.
func TestOffDoesNothing(t *testing.T) {
	t.Parallel()
	tel, err := New(Config{})
	assert.NoError(t, err)
	assert.Nil(t, tel)
	assert.False(t, tel.Tracing())
	tel.SandboxLive(paddock.ProviderFake, 1)
	tel.Reaped(paddock.ProviderFake, paddock.ReapReport{Stopped: []string{"x"}})
	op := tel.Start(context.Background(), paddock.ProviderFake, "create")
	op.End(paddock.KindNotFound, "")
	s := tel.Stream(paddock.ProviderFake)
	s.Event(paddock.Stdout([]byte("x")))
	s.Waiting(true)
	s.Waiting(false)
	s.Failed()
	s.Done()
}
