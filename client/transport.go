package client

import (
	"context"
	"io"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// Request is what every request of package messages has.
type Request interface {
	proto.Message
	GetId() string
}

// Reply is what every reply of package messages has.
type Reply interface {
	proto.Message
	GetFailure() *messages.Failure
}

// Transport carries a Client's requests to a runtime and its streams back.
// It sets each request's id. An error it returns is its own (no reply
// came: unavailable, and errors.Is still finds a context's end); a
// failure the runtime answered arrives inside the reply, and the Client
// decodes it.
type Transport interface {
	// Capabilities is what provider p's adapter advertises now, less what
	// the transport cannot carry; an unknown provider advertises nothing.
	Capabilities(p paddock.Provider) paddock.CapabilitySet
	// Call sends q and returns its reply. hold is how long the runtime
	// may legitimately take to perform q beyond the transport's own
	// bound on a reply (an exec's timeout), or 0.
	Call(ctx context.Context, q Request, hold time.Duration) (Reply, error)
	// Open sends q (a SpawnRequest, AttachRequest or WatchRequest) with an
	// owner of the transport's as the recipient of its frames, and returns
	// the stream of those frames once the reply came (nil when the reply
	// is a failure).
	Open(ctx context.Context, q Request) (paddock.Stream, Reply, error)
	// Upload sends q with r's bytes as the file's content; nothing reads
	// r once it returns.
	Upload(ctx context.Context, q *messages.WriteFileRequest, r io.Reader) (Reply, error)
	// Download sends q and returns the file's content (nil when the reply
	// is a failure).
	Download(ctx context.Context, q *messages.ReadFileRequest) (io.ReadCloser, Reply, error)
}

// HostPather is implemented by transports whose runtime shares this
// machine's paths, so an in-sandbox path can be mapped as the adapter
// sees it.
type HostPather interface {
	HostPath(h paddock.Handle, path string) string
}
