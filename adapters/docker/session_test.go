package docker_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The listing script's STATE field, read into each session's state; a
// field the script never writes makes the listing malformed.
func TestSessionListingStates(t *testing.T) {
	t.Parallel()
	three := 3
	failed := paddock.Session{}
	failed.Ended(paddock.Failed(paddock.ErrClosedBeforeExit))
	cases := []struct {
		state string
		want  paddock.Session
	}{
		{"running", paddock.Session{State: paddock.SessionRunning}},
		{"exit:3", paddock.Session{State: paddock.SessionExited, ExitCode: &three}},
		{"lost", failed},
		{"ended", paddock.Session{State: paddock.SessionEnded}},
	}
	for _, tc := range cases {
		t.Run(tc.state, func(t *testing.T) {
			t.Parallel()
			got, err := docker.ParseSessions([]byte("s1 1000 0 7 5 " + tc.state + " dev\nsleep"))
			require.NoError(t, err)
			want := tc.want
			want.ID, want.Name, want.Command = "s1", "dev", "sleep"
			want.CreatedAt, want.LastActivityAt = time.Unix(0, 1000).UTC(), time.Unix(7, 0).UTC()
			assert.Equal(t, []paddock.Session{want}, got)
		})
	}
	for _, bad := range []string{"exit:", "exit:x", "3", "gone", "exit:3x"} {
		_, err := docker.ParseSessions([]byte("s1 1000 0 7 5 " + bad + "\nsleep"))
		require.ErrorIs(t, err, paddock.ErrProvider, "state %q", bad)
	}
}
