package messages_test

import (
	"testing"

	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/proto"
)

func TestOperationIsDerivedFromTheMessageName(t *testing.T) {
	t.Parallel()
	cases := map[string]proto.Message{
		"create":                 &messages.CreateRequest{},
		"list":                   &messages.ListReply{},
		"list_dir":               &messages.ListDirRequest{},
		"public_url":             &messages.PublicURLRequest{},
		"create_checkpoint_once": &messages.CreateCheckpointOnceReply{},
		"apply_network_policy":   &messages.ApplyNetworkPolicyRequest{},
		"write_stdin":            &messages.WriteStdinRequest{},
		"make_dir":               &messages.MakeDirReply{},
	}
	for want, m := range cases {
		assert.Equal(t, want, messages.Operation(m), "%T", m)
	}
}
