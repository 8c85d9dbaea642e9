package actors

import (
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// EventOf turns a frame into the stream event it stands for, for owner
// actors that read their frames as events.
func EventOf(f messages.Frame) paddock.Event { return wire.EventOf(f) }
