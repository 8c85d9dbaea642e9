//go:build linux

// Package inotify reads the records of a Linux inotify descriptor: the
// one parser the local adapter's watch, paddock-watch and e2btest share.
package inotify

import (
	"bytes"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Record is one inotify record: the watch it came from, what happened, and
// the entry's name (empty for the watched directory itself).
type Record struct {
	Wd   int32
	Mask uint32
	Name []byte // points into the buffer Records was given
}

// Records calls fn for each whole record in buf, in order, until fn
// answers false; it reports whether fn wanted more.
func Records(buf []byte, fn func(Record) bool) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		end := off + unix.SizeofInotifyEvent + int(raw.Len)
		if end > len(buf) {
			return true
		}
		name := buf[off+unix.SizeofInotifyEvent : end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i] // the kernel pads names with NULs
		}
		off = end
		if !fn(Record{Wd: raw.Wd, Mask: raw.Mask, Name: name}) {
			return false
		}
	}
	return true
}
