package paddock

import "time"

// Clock is the time source of deadlines and backoff, injectable so tests
// never sleep. Now must carry a monotonic reading, as time.Now does.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// SystemClock returns the real clock.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// clockOrSystem returns c, or the system clock when c is nil.
func clockOrSystem(c Clock) Clock {
	if c == nil {
		return systemClock{}
	}
	return c
}
