//go:build !linux

package e2btest

import "errors"

// notifier cannot watch here: a streaming watch (WatchDir) needs Linux's
// inotify, so it fails at its start; the polling watchers still work.
type notifier struct {
	events chan change
	done   chan struct{}
}

func newNotifier(string, bool) (*notifier, error) {
	return nil, errors.New("e2btest: streaming watches need Linux's inotify")
}

func (*notifier) close() {}
