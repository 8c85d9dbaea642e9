package daemon

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/require"
)

// The service offers every operation of the actor protocol: each request
// of messages.proto has its RPC (service.proto lists them by hand).
func TestEveryRequestHasItsRPC(t *testing.T) {
	t.Parallel()
	all := messages.File_messages_proto.Messages()
	n := 0
	for i := range all.Len() {
		name := all.Get(i).FullName()
		if !strings.HasSuffix(string(name), "Request") {
			continue
		}
		n++
		_, ok := methods[name]
		require.True(t, ok, "%s has no RPC in service.proto", name)
	}
	require.Equal(t, n, len(methods), "an RPC of no request")
}
