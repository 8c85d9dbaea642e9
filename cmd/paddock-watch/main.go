//go:build linux

// Command paddock-watch reports the changes of one directory's entries, for
// adapters whose sandboxes run in images without an inotify tool (the
// docker adapter runs it inside the sandbox). Usage: paddock-watch DIR.
//
// Once the watch is in place it prints "ready\n"; then one record per
// change: the change's letter (c create, w write, d remove, r rename), a
// space, the name's length in bytes, a newline, and the name itself, so
// every byte of every name arrives as it is. It ends with exit 0 when its
// standard input closes, 3 when the directory is gone, 4 when the kernel
// dropped changes (its queue overflowed), and 2 when it could not start.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/paddockhq/paddock/internal/inotify"
	"golang.org/x/sys/unix"
)

const mask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

func main() { os.Exit(run()) }

func run() int {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: paddock-watch DIR")
		return 2
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, "paddock-watch:", err)
		return 2
	}
	if _, err := unix.InotifyAddWatch(fd, os.Args[1], mask); err != nil {
		fmt.Fprintln(os.Stderr, "paddock-watch:", err)
		if err == unix.ENOENT {
			return 3
		}
		return 2
	}
	// The caller ends the watch by closing our stdin.
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				os.Exit(0)
			}
		}
	}()
	out := os.Stdout
	if _, err := out.WriteString("ready\n"); err != nil {
		return 0
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "paddock-watch:", err)
			return 2
		}
		var records []byte
		code := -1
		inotify.Records(buf[:n], func(r inotify.Record) bool {
			var letter byte
			switch {
			case r.Mask&unix.IN_Q_OVERFLOW != 0:
				code = 4
				return false
			case r.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
				code = 3
				return false
			case r.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
				letter = 'c'
			case r.Mask&unix.IN_MODIFY != 0:
				letter = 'w'
			case r.Mask&unix.IN_DELETE != 0:
				letter = 'd'
			case r.Mask&unix.IN_MOVED_FROM != 0:
				letter = 'r'
			default:
				return true
			}
			records = append(records, letter, ' ')
			records = strconv.AppendInt(records, int64(len(r.Name)), 10)
			records = append(records, '\n')
			records = append(records, r.Name...)
			return true
		})
		if code >= 0 {
			_, _ = out.Write(records)
			return code
		}
		if _, err := out.Write(records); err != nil {
			return 0
		}
	}
}
