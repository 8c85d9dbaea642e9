package paddock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock"
)

func ExampleWithBackoff() {
	calls := 0
	err := paddock.WithBackoff(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return &paddock.UnavailableError{Detail: "http", Status: 503} // transient: retried
		}
		return nil
	}, paddock.BackoffOpts{Base: time.Millisecond, Label: "get sandbox"})
	fmt.Println(calls, err)
	// Output: 3 <nil>
}

func ExampleIsTransient() {
	err := &paddock.OpError{Op: "get", Provider: "sprites", Name: "box", Err: paddock.ErrNotFound}
	fmt.Println(err, paddock.IsTransient(err), errors.Is(err, paddock.ErrNotFound))
	fmt.Println(paddock.IsTransient(paddock.ErrClosedBeforeExit))
	// Output:
	// get sprites/box: not found false true
	// true
}

func ExampleTerminateSession() {
	// Validation comes before anything else, so bad input is invalid even on
	// an adapter that could never terminate a session.
	_, err := paddock.ValidateTermination("../other", paddock.TerminateOpts{})
	fmt.Println(errors.Is(err, paddock.ErrTerminationRequest))
	// Output: true
}
