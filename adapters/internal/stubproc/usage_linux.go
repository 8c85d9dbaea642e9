//go:build linux

package stubproc

import (
	"os"
	"strconv"
	"time"
)

// GroupsUsage adds up the usage of every live process in one of groups.
func GroupsUsage(groups map[int]bool) Usage {
	var u Usage
	if len(groups) == 0 {
		return u
	}
	page := int64(os.Getpagesize())
	_ = eachProcess(func(_ int, f []string) {
		if len(f) < 22 {
			return
		}
		if pgrp, err := strconv.Atoi(f[2]); err != nil || !groups[pgrp] {
			return
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		rss, _ := strconv.ParseInt(f[21], 10, 64)
		u.CPU += time.Duration(utime+stime) * time.Second / clockTicks
		u.RSS += rss * page
	})
	return u
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100
