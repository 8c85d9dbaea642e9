package secretscan_test

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/secretscan"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCaptureFindsSecretsInLogsAndErrors(t *testing.T) {
	t.Parallel()
	c := secretscan.New()
	c.Secret("s3cret")
	c.Secret("other")
	log := c.Logger()
	log.Debug().Str("call", "list").Msg("fine")
	c.Err(nil)
	assert.Zero(t, c.Leaks())
	assert.Equal(t, 1, c.Lines())
	c.Err(errors.New("denied for s3cret"))
	assert.Equal(t, 1, c.Leaks(), "an error's text is scanned")
	log.Debug().Msg("other")
	assert.Equal(t, 2, c.Leaks(), "a debug log line is scanned")
}
