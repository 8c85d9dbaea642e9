//go:build !linux

package stubnotify

import "errors"

// Watch cannot watch here: it needs Linux's inotify, so Start fails.
type Watch struct{}

// Start fails: streaming watches need Linux's inotify.
func Start(string, bool) (*Watch, error) {
	return nil, errors.New("stubnotify: streaming watches need Linux's inotify")
}

// Events is never sent on.
func (*Watch) Events() <-chan Change { return nil }

// Done is never closed.
func (*Watch) Done() <-chan struct{} { return nil }

// Close does nothing.
func (*Watch) Close() {}
