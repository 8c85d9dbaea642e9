package paddock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var d = paddock.Duration

// boundedTimeoutCases are the invalid values every bounded timeout rejects,
// given its upper bound: explicit zero (absent means default), negative,
// bound+1ms and a fraction of a millisecond.
func boundedTimeoutCases(max time.Duration) map[string]*time.Duration {
	return map[string]*time.Duration{
		"explicit zero":         d(0),
		"negative":              d(-time.Millisecond),
		"bound+1":               d(max + time.Millisecond),
		"fractional ms (1.5ms)": d(1500 * time.Microsecond),
		"sub-millisecond":       d(time.Microsecond),
	}
}

// passingBounds are the accepted values given the bounds: 1ms, the upper
// bound, and absent (the default).
func passingBounds(def, max time.Duration) map[string]struct {
	in   *time.Duration
	want time.Duration
} {
	return map[string]struct {
		in   *time.Duration
		want time.Duration
	}{
		"lower bound 1ms": {d(time.Millisecond), time.Millisecond},
		"upper bound":     {d(max), max},
		"absent default":  {nil, def},
		"middle":          {d(max / 2), max / 2},
	}
}

func TestTerminateValidation(t *testing.T) {
	t.Parallel()
	t.Run("timeouts", func(t *testing.T) {
		for name, timeout := range boundedTimeoutCases(30 * time.Second) {
			t.Run(name, func(t *testing.T) {
				_, err := paddock.ValidateTermination("sess-1", paddock.TerminateOpts{Timeout: timeout})
				require.ErrorIs(t, err, paddock.ErrTerminationRequest)
			})
		}
		for name, tc := range passingBounds(10*time.Second, 30*time.Second) {
			t.Run(name, func(t *testing.T) {
				o, err := paddock.ValidateTermination("sess-1", paddock.TerminateOpts{Timeout: tc.in})
				require.NoError(t, err)
				require.NotNil(t, o.Timeout)
				assert.Equal(t, tc.want, *o.Timeout)
				assert.Equal(t, paddock.TerminateGraceful, o.Mode, "absent mode is graceful")
			})
		}
	})
	t.Run("session ids", func(t *testing.T) {
		invalid := map[string]string{
			"empty":          "",
			"path traversal": "../other",
			"slash":          "a/b",
			"query":          "a?x=1",
			"257 chars":      strings.Repeat("a", 257),
			"space":          "a b",
			"newline":        "a\n",
			"dot":            "a.b",
		}
		for name, id := range invalid {
			t.Run(name, func(t *testing.T) {
				_, err := paddock.ValidateTermination(id, paddock.TerminateOpts{})
				require.ErrorIs(t, err, paddock.ErrTerminationRequest)
			})
		}
		valid := map[string]string{
			"one char":  "a",
			"256 chars": strings.Repeat("Z", 256),
			"mixed":     "fake-sess_12-AB",
			"numeric":   "42",
		}
		for name, id := range valid {
			t.Run(name, func(t *testing.T) {
				_, err := paddock.ValidateTermination(id, paddock.TerminateOpts{})
				require.NoError(t, err)
			})
		}
	})
	t.Run("modes", func(t *testing.T) {
		tests := map[string]struct {
			mode paddock.TerminateMode
			want paddock.TerminateMode
			ok   bool
		}{
			"absent":       {"", paddock.TerminateGraceful, true},
			"graceful":     {paddock.TerminateGraceful, paddock.TerminateGraceful, true},
			"force":        {paddock.TerminateForce, paddock.TerminateForce, true},
			"unknown mode": {"kill", "", false},
			"upper case":   {"FORCE", "", false},
		}
		for name, tc := range tests {
			t.Run(name, func(t *testing.T) {
				o, err := paddock.ValidateTermination("s", paddock.TerminateOpts{Mode: tc.mode})
				if !tc.ok {
					require.ErrorIs(t, err, paddock.ErrTerminationRequest)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.want, o.Mode)
			})
		}
	})
}

func TestCreateNewValidation(t *testing.T) {
	t.Parallel()
	for name, timeout := range boundedTimeoutCases(120 * time.Second) {
		t.Run(name, func(t *testing.T) {
			_, err := paddock.CreateNewOpts{Timeout: timeout}.Validate()
			require.ErrorIs(t, err, paddock.ErrCreateTimeoutOption)
			require.ErrorIs(t, err, paddock.ErrInvalid)
		})
	}
	for name, tc := range passingBounds(120*time.Second, 120*time.Second) {
		t.Run(name, func(t *testing.T) {
			o, err := paddock.CreateNewOpts{Timeout: tc.in, WaitForCapacity: true}.Validate()
			require.NoError(t, err)
			assert.Equal(t, tc.want, *o.Timeout)
			assert.True(t, o.WaitForCapacity, "other options are kept")
		})
	}
}

func TestDestroyOnceValidation(t *testing.T) {
	t.Parallel()
	for name, timeout := range boundedTimeoutCases(120 * time.Second) {
		t.Run(name, func(t *testing.T) {
			_, err := paddock.DestroyOnceOpts{Timeout: timeout}.Validate()
			require.ErrorIs(t, err, paddock.ErrDeleteTimeoutOption)
			_, _, err = paddock.DestroyOnceOpts{Timeout: timeout}.Bound(context.Background())
			require.ErrorIs(t, err, paddock.ErrDeleteTimeoutOption, "Bound validates")
		})
	}
	for name, tc := range passingBounds(30*time.Second, 120*time.Second) {
		t.Run(name, func(t *testing.T) {
			o, err := paddock.DestroyOnceOpts{Timeout: tc.in}.Validate()
			require.NoError(t, err)
			assert.Equal(t, tc.want, *o.Timeout)
			before := time.Now()
			bounded, cancel, err := paddock.DestroyOnceOpts{Timeout: tc.in}.Bound(context.Background())
			require.NoError(t, err)
			defer cancel()
			deadline, ok := bounded.Deadline()
			require.True(t, ok, "Bound sets the attempt's deadline")
			assert.False(t, deadline.Before(before.Add(tc.want)), "no earlier than the timeout")
			assert.False(t, deadline.After(time.Now().Add(tc.want)), "no later than the timeout")
		})
	}
}

func TestCheckpointOnceValidation(t *testing.T) {
	t.Parallel()
	t.Run("timeouts", func(t *testing.T) {
		for name, timeout := range boundedTimeoutCases(120 * time.Second) {
			t.Run(name, func(t *testing.T) {
				_, err := paddock.CheckpointOnceOpts{Timeout: timeout, OperationID: "op-1"}.Validate()
				require.ErrorIs(t, err, paddock.ErrCheckpointTimeoutOption)
			})
		}
		for name, tc := range passingBounds(30*time.Second, 120*time.Second) {
			t.Run(name, func(t *testing.T) {
				o, err := paddock.CheckpointOnceOpts{Timeout: tc.in, OperationID: "op-1"}.Validate()
				require.NoError(t, err)
				assert.Equal(t, tc.want, *o.Timeout)
			})
		}
	})
	t.Run("operation ids", func(t *testing.T) {
		invalid := map[string]string{
			"empty":          "",
			"space":          "op 1",
			"newline":        "op\n",
			"129 chars":      strings.Repeat("a", 129),
			"path traversal": "../other",
			"slash":          "a/b",
		}
		for name, id := range invalid {
			t.Run(name, func(t *testing.T) {
				_, err := paddock.CheckpointOnceOpts{OperationID: id}.Validate()
				require.ErrorIs(t, err, paddock.ErrCheckpointOperationID)
			})
		}
		for name, id := range map[string]string{"128 chars": strings.Repeat("a", 128), "one char": "x", "mixed": "op_1-A"} {
			t.Run(name, func(t *testing.T) {
				_, err := paddock.CheckpointOnceOpts{OperationID: id}.Validate()
				require.NoError(t, err)
			})
		}
	})
	t.Run("timeout is checked before the operation id", func(t *testing.T) {
		_, err := paddock.CheckpointOnceOpts{Timeout: d(0), OperationID: ""}.Validate()
		require.ErrorIs(t, err, paddock.ErrCheckpointTimeoutOption)
	})
	assert.Equal(t, "sandbox-operation:op-1", paddock.CheckpointComment("op-1"))
}

func TestExecOptsValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		timeout *time.Duration
		ok      bool
	}{
		"absent is infinite":       {nil, true},
		"explicit zero is allowed": {d(0), true}, // it expires at once (docs/contract.md#exec-deadlines)
		"positive":                 {d(time.Second), true},
		"negative":                 {d(-time.Second), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := paddock.ExecOpts{Timeout: tc.timeout}.Validate()
			requireValidity(t, tc.ok, err)
		})
	}
}

func TestSpawnOptsValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		name string
		ok   bool
	}{
		"no name":        {"", true},
		"good name":      {"dev-server_1", true},
		"path traversal": {"../x", false},
		"slash":          {"a/b", false},
		"257 chars":      {strings.Repeat("n", 257), false},
		"256 chars":      {strings.Repeat("n", 256), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := paddock.SpawnOpts{Name: tc.name}.Validate()
			requireValidity(t, tc.ok, err)
		})
	}
}

func TestCmdValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		cmd paddock.Cmd
		ok  bool
	}{
		"plain":             {paddock.NewCmd("echo", "hi"), true},
		"env and dir":       {paddock.Cmd{Path: "/bin/sh", Env: []paddock.EnvVar{{Name: "A", Value: "x=y"}}, Dir: "/tmp"}, true},
		"empty path":        {paddock.Cmd{}, false},
		"NUL in path":       {paddock.NewCmd("ec\x00ho"), false},
		"NUL in arg":        {paddock.NewCmd("echo", "a\x00b"), false},
		"NUL in dir":        {paddock.Cmd{Path: "echo", Dir: "/t\x00"}, false},
		"empty env name":    {paddock.Cmd{Path: "echo", Env: []paddock.EnvVar{{Value: "v"}}}, false},
		"= in env name":     {paddock.Cmd{Path: "echo", Env: []paddock.EnvVar{{Name: "A=B"}}}, false},
		"NUL in env value":  {paddock.Cmd{Path: "echo", Env: []paddock.EnvVar{{Name: "A", Value: "\x00"}}}, false},
		"empty argument ok": {paddock.NewCmd("printf", ""), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.cmd.Validate()
			requireValidity(t, tc.ok, err)
		})
	}
	assert.Equal(t, "sh -c echo ready; exec cat", paddock.NewCmd("sh", "-c", "echo ready; exec cat").Line())
}

func TestNetworkPolicyValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		allow []string
		ok    bool
	}{
		"nil denies all":   {nil, true},
		"empty denies all": {[]string{}, true},
		"domain":           {[]string{"api.example.com"}, true},
		"wildcard":         {[]string{"*.github.com"}, true},
		"single label":     {[]string{"localhost"}, true},
		"bare star":        {[]string{"*"}, false},
		"scheme":           {[]string{"https://x.com"}, false},
		"empty entry":      {[]string{""}, false},
		"path":             {[]string{"x.com/a"}, false},
		"inner wildcard":   {[]string{"a.*.com"}, false},
		"trailing dot":     {[]string{"x.com."}, false},
		"leading hyphen":   {[]string{"-x.com"}, false},
		"long label":       {[]string{strings.Repeat("a", 64) + ".com"}, false},
		"space":            {[]string{"x .com"}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := paddock.NetworkPolicy{Allow: tc.allow}.Validate()
			requireValidity(t, tc.ok, err)
		})
	}
}

func TestExposeValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		port    int
		ttl     time.Duration
		wantTTL time.Duration
		ok      bool
	}{
		"default ttl":     {8080, 0, 10 * time.Minute, true},
		"port 1":          {1, time.Minute, time.Minute, true},
		"port 65535":      {65535, 24 * time.Hour, 24 * time.Hour, true},
		"port 0":          {0, 0, 0, false},
		"port 65536":      {65536, 0, 0, false},
		"negative port":   {-1, 0, 0, false},
		"negative ttl":    {80, -time.Second, 0, false},
		"ttl beyond 24 h": {80, 24*time.Hour + time.Second, 0, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, err := paddock.ValidateExpose(tc.port, paddock.ExposeOpts{TTL: tc.ttl})
			if !tc.ok {
				require.ErrorIs(t, err, paddock.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantTTL, o.TTL)
		})
	}
}

func TestSandboxNamesAndPaths(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in string
		ok bool
	}{
		"plain": {"my-box", true}, "empty": {"", false}, "dot": {".", false}, "dotdot": {"..", false},
		"slash": {"a/b", false}, "NUL": {"a\x00", false}, "257": {strings.Repeat("a", 257), false},
	} {
		t.Run("name "+name, func(t *testing.T) {
			if tc.ok {
				assert.NoError(t, paddock.ValidateSandboxName(tc.in))
			} else {
				assert.ErrorIs(t, paddock.ValidateSandboxName(tc.in), paddock.ErrInvalid)
			}
		})
	}
	for name, tc := range map[string]struct {
		in string
		ok bool
	}{
		"absolute": {"/workspace/a.txt", true}, "relative": {"a.txt", false}, "empty": {"", false}, "NUL": {"/a\x00", false},
	} {
		t.Run("path "+name, func(t *testing.T) {
			err := paddock.ValidatePath(tc.in)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, paddock.ErrInvalid)
			}
		})
	}
}

// requireValidity requires err to be nil when ok, else an invalid error.
func requireValidity(t *testing.T, ok bool, err error) {
	t.Helper()
	if ok {
		require.NoError(t, err)
		return
	}
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

func TestSignalValidationAndDelivery(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		sig   paddock.Signal
		ended bool
		want  error
	}{
		"a known signal to a live command": {paddock.SignalTerm, false, nil},
		"a known signal to an ended one":   {paddock.SignalUsr1, true, paddock.ErrCommandExited},
		"an unknown signal":                {"WINCH", false, paddock.ErrInvalid},
		"an unknown signal, ended":         {"", true, paddock.ErrInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.sig.Deliverable(tc.ended)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}
