package sandboximage

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The engine's build output: text is passed on, the id is taken from
// the aux message, and an error message ends the build with its text.
func TestReadProgress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, text, id, err string
	}{
		{"a build", `{"stream":"Step 1/4 : FROM base\n"}{"aux":{"ID":"sha256:abc"}}{"stream":"Successfully built abc\n"}`,
			"Step 1/4 : FROM base\nSuccessfully built abc\n", "sha256:abc", ""},
		{"no id", `{"stream":"done\n"}`, "done\n", "", ""},
		{"a failed step", `{"stream":"Step 2/4 : RUN x\n"}{"errorDetail":{"code":1,"message":"the base image has no nc, which the docker adapter needs\n"},"error":"..."}`,
			"Step 2/4 : RUN x\n", "", "the base image has no nc, which the docker adapter needs"},
		{"a cut answer", `{"stream":"Step 1/4`, "", "", "reading the engine's build output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var text bytes.Buffer
			id, err := readProgress(strings.NewReader(tc.body), &text)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.id, id)
			assert.Equal(t, tc.text, text.String())
		})
	}
}

// The build context holds exactly the Dockerfile and each helper,
// executable.
func TestContextTar(t *testing.T) {
	t.Parallel()
	r, err := contextTar(map[string][]byte{"paddock-watch": []byte("\x7fELF watch"), "paddock-egress": []byte("\x7fELF egress")})
	require.NoError(t, err)
	tr := tar.NewReader(r)
	got := map[string]string{}
	modes := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		got[h.Name], modes[h.Name] = string(body), h.Mode
	}
	assert.Equal(t, string(dockerfile), got["Dockerfile"])
	assert.Equal(t, "\x7fELF watch", got["paddock-watch"])
	assert.Equal(t, "\x7fELF egress", got["paddock-egress"])
	assert.Len(t, got, 3)
	assert.EqualValues(t, 0o755, modes["paddock-watch"])
	assert.EqualValues(t, 0o755, modes["paddock-egress"])
	assert.Contains(t, got["Dockerfile"], "COPY paddock-watch paddock-egress /usr/local/bin/")
	assert.Contains(t, got["Dockerfile"], "ARG BASE="+DefaultBase)
	assert.Contains(t, got["Dockerfile"], docker.ImageLabel+`="`+docker.ImageTitle+`"`, "the label that says the helpers are in")
}

func TestGoArch(t *testing.T) {
	t.Parallel()
	for machine, want := range map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"} {
		got, err := goArch(machine)
		require.NoError(t, err, machine)
		assert.Equal(t, want, got, machine)
	}
	_, err := goArch("s390x")
	require.ErrorContains(t, err, "s390x")
}

// Build refuses to start without every helper, before it talks to any
// engine.
func TestBuildNeedsTheHelpers(t *testing.T) {
	t.Parallel()
	for name := range HelperPackages {
		helpers := map[string][]byte{"paddock-watch": []byte("w"), "paddock-egress": []byte("e")}
		delete(helpers, name)
		_, err := Build(t.Context(), nil, Options{Helpers: helpers})
		require.ErrorContains(t, err, "no "+name, name)
	}
}
