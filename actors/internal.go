package actors

import (
	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// Messages between the runtime's own actors and goroutines. They never leave
// the process, so they are plain Go values, not protobuf.

// streamOpened tells the root that an adapter opened a stream for a spawn,
// an attach or a watch; the root then starts its command actor.
type streamOpened struct {
	stream   paddock.Stream
	provider paddock.Provider // the provider tag the caller used
	owner    *actor.PID       // receives the frames
	window   int
	skip     [2]uint64 // an attach's skipped stdout and stderr bytes
	replyTo  *actor.PID
	answer   func(*messages.CommandRef) proto.Message // the request's reply, naming the new command
	sandbox  *actor.PID                               // the sandbox actor, told when the command starts and ends
	opening  openKey                                  // the request's, when a remote owner sent it
}

// execCall carries an ExecRequest to its sandbox actor with the deadline the
// root fixed when the request arrived.
type execCall struct {
	req      *messages.ExecRequest
	deadline paddock.ExecDeadline
}

// commandDone tells the root that a command actor is finished: it sent its
// terminal frame, or was detached. The root then stops it.
type commandDone struct {
	ref      paddock.Ref
	detached bool
}

// detachCommand detaches a command whose owner stopped, exactly like
// StopCommand but with nobody to answer.
type detachCommand struct{}

// launch starts a command actor's reading: commands never start in Started,
// so nothing can ever run twice.
type launch struct{}

// handleUpdate refreshes a sandbox actor's handle (and its private state)
// after Create, CreateNew or Resume.
type handleUpdate struct{ h paddock.Handle }

// sandboxGone tells the root that a sandbox was destroyed, so its actor can
// stop.
type sandboxGone struct {
	key string
	pid *actor.PID
}

// sandboxStopped tells the root that a stopped sandbox actor is gone.
type sandboxStopped struct{ key string }

// Reports of a command actor's goroutines.
type (
	readerDone  struct{} // the reader sent the terminal frame
	readerPanic struct{ v any }
	stdinDone   struct {
		req stdinReq
		err error
	}
	writerPanic struct {
		req stdinReq
		v   any
	}
)
