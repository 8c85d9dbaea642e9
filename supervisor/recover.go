package supervisor

import (
	"fmt"
	"runtime/debug"

	"github.com/anthdm/hollywood/actor"
	"github.com/rs/zerolog"
)

// PanicHandler is implemented by actors that turn a panic into their own
// verdict (a command actor sends its owner an Error frame). OnPanic runs
// inside the recover; it reports whether the actor must stop.
type PanicHandler interface {
	OnPanic(c *actor.Context, v any) (stop bool)
}

// Recover returns the middleware every runtime actor carries: a panic in
// Receive (Started and the normal-path Stopped included) is recovered and
// logged; then the actor's PanicHandler decides, and an actor without one is
// stopped. A panic never reaches hollywood, so no restart happens and the
// restart-exhaustion crash of hollywood v1.0.5 cannot occur.
func Recover(log zerolog.Logger) actor.MiddlewareFunc {
	return func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c *actor.Context) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				log.Error().Str("actor", c.PID().ID).Str("message", fmt.Sprintf("%T", c.Message())).
					Str("panic", PanicText(v)).Bytes("stack", debug.Stack()).Msg("actor panicked")
				stop := true
				if h, ok := c.Receiver().(PanicHandler); ok {
					stop = callHandler(log, c, h, v)
				}
				if _, stopping := c.Message().(actor.Stopped); stop && !stopping {
					c.Engine().Poison(c.PID())
				}
			}()
			next(c)
		}
	}
}

// callHandler runs OnPanic, itself guarded: a handler that panics stops the
// actor.
func callHandler(log zerolog.Logger, c *actor.Context, h PanicHandler, v any) (stop bool) {
	defer func() {
		if w := recover(); w != nil {
			log.Error().Str("actor", c.PID().ID).Str("panic", PanicText(w)).Msg("panic handler panicked")
			stop = true
		}
	}()
	return h.OnPanic(c, v)
}

// maxPanicText bounds the panic text carried in frames and logs.
const maxPanicText = 256

// PanicText renders a recovered value briefly, for a frame's detail.
func PanicText(v any) string {
	s := fmt.Sprint(v)
	if len(s) > maxPanicText {
		s = s[:maxPanicText] + "..."
	}
	return s
}
