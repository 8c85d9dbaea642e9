//go:build !linux

package stubfs

import "errors"

// Without Linux's mount namespaces a space is never mapped: its processes
// see this machine's paths, and nothing holds a namespace.

type holder struct{}

func startHolder(Config) (*holder, error)            { return nil, errors.ErrUnsupported }
func (*holder) root() string                         { return "" }
func (*holder) enter(_ User, argv []string) []string { return argv }
func (*holder) ended() bool                          { return true }
func (*holder) stop()                                {}

// Probe answers false: mount namespaces need Linux.
func Probe(string) bool { return false }
