package paddock_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "sk-live-TOPSECRET-0123456789"

// client is what an adapter might keep in a handle's private state.
type client struct {
	BaseURL string
	Token   string
}

// renderings prints v every way a caller or a logger might.
func renderings(t *testing.T, v any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		out[verb] = fmt.Sprintf(verb, v)
	}
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		out["in a struct "+verb] = fmt.Sprintf(verb, struct{ Field any }{v})
		out["in a slice "+verb] = fmt.Sprintf(verb, []any{v})
	}
	js, err := json.Marshal(v)
	require.NoError(t, err)
	out["json"] = string(js)
	js, err = json.Marshal(map[string]any{"nested": v})
	require.NoError(t, err)
	out["nested json"] = string(js)

	var buf bytes.Buffer
	log := zerolog.New(&buf)
	log.Info().Interface("value", v).Msg("interface")
	log.Info().Any("value", v).Msg("any")
	log.Info().Msgf("msgf %v %+v", v, v)
	if s, ok := v.(fmt.Stringer); ok {
		log.Info().Stringer("value", s).Msg("stringer")
	}
	if o, ok := v.(zerolog.LogObjectMarshaler); ok {
		log.Info().Object("value", o).Msg("object")
	}
	out["zerolog"] = buf.String()

	var sbuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&sbuf, nil)).Info("x", "value", v)
	slog.New(slog.NewTextHandler(&sbuf, nil)).Info("x", "value", v)
	out["slog"] = sbuf.String()
	return out
}

func TestSecretsNeverPrint(t *testing.T) {
	t.Parallel()
	values := map[string]any{
		"handle with a client": paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-1",
			Private: &client{BaseURL: "https://api.sprites.dev", Token: token}},
		"handle with a bare token": paddock.Handle{Provider: "sprites", Name: "box", Private: token},
		"handle pointer":           &paddock.Handle{Provider: "sprites", Name: "box", Private: token},
		"command":                  paddock.Subscription{Provider: "e2b", Ref: "r-1", Private: map[string]string{"k": token}},
		"secret":                   paddock.NewSecret(token),
		"preview":                  paddock.Preview{URL: "https://p.test/", Port: 80, Token: paddock.NewSecret(token), ExpiresAt: time.Unix(0, 0)},
		"cmd env":                  paddock.Cmd{Path: "agent", Env: []paddock.EnvVar{{Name: "API_KEY", Value: token}}},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			for how, text := range renderings(t, v) {
				assert.NotContains(t, text, token, "%s leaks the secret: %s", how, text)
				assert.NotContains(t, text, "TOPSECRET", how)
			}
		})
	}
}

func TestHandleAndCommandPrintTheirIdentity(t *testing.T) {
	t.Parallel()
	h := paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-1", Private: token}
	assert.Equal(t, "sprites/box", fmt.Sprint(h))
	assert.Equal(t, "sprites/box", fmt.Sprintf("%+v", h))
	assert.Equal(t, `paddock.Handle{Provider:"sprites", Name:"box"}`, fmt.Sprintf("%#v", h))
	assert.Equal(t, `"sprites/box"`, fmt.Sprintf("%q", h))
	js, err := json.Marshal(h)
	require.NoError(t, err)
	assert.JSONEq(t, `{"provider":"sprites","name":"box","instance_id":"i-1"}`, string(js))

	var back paddock.Handle
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, paddock.Handle{Provider: "sprites", Name: "box", InstanceID: "i-1"}, back, "a persisted handle comes back without private state")

	var buf bytes.Buffer
	logger := zerolog.New(&buf)
	logger.Info().Object("h", h).Msg("")
	assert.JSONEq(t, `{"level":"info","h":{"provider":"sprites","name":"box"}}`, buf.String())

	c := paddock.Subscription{Provider: "e2b", Ref: "r-7", Private: token}
	assert.Equal(t, "e2b/r-7", fmt.Sprintf("%v", c))
	assert.Equal(t, `paddock.Subscription{Provider:"e2b", Ref:"r-7"}`, fmt.Sprintf("%#v", c))
}

func TestSecretRevealAndPreviewHeader(t *testing.T) {
	t.Parallel()
	s := paddock.NewSecret(token)
	assert.Equal(t, token, s.Reveal())
	assert.False(t, s.IsZero())
	assert.True(t, paddock.Secret{}.IsZero())

	var cfg struct{ Token paddock.Secret }
	require.NoError(t, json.Unmarshal([]byte(`{"Token":"from-config"}`), &cfg))
	assert.Equal(t, "from-config", cfg.Token.Reveal())

	p := paddock.Preview{URL: "https://p.test/", Token: s}
	req, err := httpRequest(p.URL)
	require.NoError(t, err)
	p.Authorize(req)
	assert.Equal(t, "Bearer "+token, req.Header.Get("Authorization"))
	assert.NotContains(t, req.URL.String(), token, "the token travels only as a header")
}
