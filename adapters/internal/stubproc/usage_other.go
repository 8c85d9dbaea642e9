//go:build !linux

package stubproc

// GroupsUsage answers nothing where the system does not say.
func GroupsUsage(map[int]bool) Usage { return Usage{} }
