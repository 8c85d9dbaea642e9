//go:build linux

package stubproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GroupsUsage adds up the usage of every live process in one of groups.
func GroupsUsage(groups map[int]bool) Usage {
	var u Usage
	if len(groups) == 0 {
		return u
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	page := int64(os.Getpagesize())
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// After the command's name, in parentheses: state, ppid, pgrp, ...,
		// utime and stime (fields 11 and 12, in clock ticks), ..., rss (21,
		// in pages).
		end := strings.LastIndexByte(string(b), ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 22 {
			continue
		}
		if pgrp, err := strconv.Atoi(f[2]); err != nil || !groups[pgrp] {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		rss, _ := strconv.ParseInt(f[21], 10, 64)
		u.CPU += time.Duration(utime+stime) * time.Second / clockTicks
		u.RSS += rss * page
	}
	return u
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100
