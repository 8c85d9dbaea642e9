package envd_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// What a real envd sent decodes into the
// project's messages, field by field.
func TestRealEnvdFramesDecode(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		json  string
		check func(t *testing.T, ev *processpb.ProcessEvent)
	}{
		"start": {`{"event":{"start":{"pid":4468}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.Equal(t, uint32(4468), ev.GetStart().GetPid())
		}},
		"stderr": {`{"event":{"data":{"stderr":"ZXJyCg=="}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.Equal(t, []byte("err\n"), ev.GetData().GetStderr())
		}},
		"exit 3 with spaces": {`{"event":{"end":{"exitCode":3, "exited":true, "status":"exit status 3", "error":"exit status 3"}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.Equal(t, int32(3), ev.GetEnd().GetExitCode())
			assert.True(t, ev.GetEnd().GetExited())
			assert.Equal(t, "exit status 3", ev.GetEnd().GetError())
		}},
		"exit 0 has no code": {`{"event":{"end":{"exited":true, "status":"exit status 0"}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.Zero(t, ev.GetEnd().GetExitCode())
			assert.Nil(t, ev.GetEnd().Error, "no error key")
		}},
		"killed": {`{"event":{"end":{"exitCode":-1,"status":"signal: killed","error":"signal: killed"}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.Equal(t, int32(-1), ev.GetEnd().GetExitCode())
			assert.False(t, ev.GetEnd().GetExited())
		}},
		"keepalive": {`{"event":{"keepalive":{}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.NotNil(t, ev.GetKeepalive())
		}},
		"unknown fields are ignored": {`{"event":{"start":{"pid":"7","later":1}}}`, func(t *testing.T, ev *processpb.ProcessEvent) {
			assert.Equal(t, uint32(7), ev.GetStart().GetPid())
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var m processpb.StartResponse
			require.NoError(t, protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal([]byte(tc.json), &m))
			tc.check(t, m.GetEvent())
		})
	}
}

// The project's messages encode as envd's JSON does: camelCase names,
// zero values left out, enums by name, int64 as a string.
func TestMessagesEncodeAsEnvdDoes(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		msg  proto.Message
		want string
	}{
		"start request": {&processpb.StartRequest{
			Process: &processpb.ProcessConfig{Cmd: "/bin/sh", Args: []string{"-c", "exit 3"}},
			Stdin:   proto.Bool(false),
		}, `{"process":{"cmd":"/bin/sh","args":["-c","exit 3"]},"stdin":false}`},
		"exit 0":     {&processpb.ProcessEvent_EndEvent{Exited: true, Status: "exit status 0"}, `{"exited":true,"status":"exit status 0"}`},
		"signal":     {&processpb.SendSignalRequest{Process: &processpb.ProcessSelector{Selector: &processpb.ProcessSelector_Pid{Pid: 42}}, Signal: processpb.Signal_SIGNAL_SIGKILL}, `{"process":{"pid":42},"signal":"SIGNAL_SIGKILL"}`},
		"empty list": {&processpb.ListResponse{}, `{}`},
		"entry":      {&filesystempb.EntryInfo{Name: "user", Type: filesystempb.FileType_FILE_TYPE_DIRECTORY, Size: 4096, Mode: 493}, `{"name":"user","type":"FILE_TYPE_DIRECTORY","size":"4096","mode":493}`},
		"watcher id": {&filesystempb.CreateWatcherResponse{WatcherId: "w1"}, `{"watcherId":"w1"}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := protojson.Marshal(tc.msg)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
}
