// Package tunnel carries a sandbox's proxy connections over one byte
// stream (an exec's standard input and output) as yamux streams: the
// sandbox's end (cmd/paddock-egress) opens a stream per connection it
// accepts, the adapter's end accepts them and serves each with its
// egress.Gate. Both ends make their session with Config.
package tunnel

import (
	"io"
	"time"

	"github.com/hashicorp/yamux"
)

// Config is a tunnel's session settings: no keep-alives (the session ends
// with its byte stream), a minute for a write to the stream, logs to logs.
// A stream holds at most 256 KiB the other end has not read.
func Config(logs io.Writer) *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.EnableKeepAlive = false
	cfg.ConnectionWriteTimeout = time.Minute
	cfg.LogOutput = logs
	return cfg
}
