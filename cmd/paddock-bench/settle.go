package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// A figure measured while something else keeps the machine busy measures
// the something else: CI runs paddock-bench right after its heavy tests,
// while the Docker engine may still be removing their containers. Before
// its first step, and before measuring a step again, the bench waits until
// the machine's processors are at most settleBusy busy over a second, for
// at most settleMost, and says so when it waited.
const (
	settleBusy = 0.2
	settleMost = time.Minute
)

// settle waits for a quiet machine as above; where the processors' times
// cannot be read (no /proc/stat), it returns at once.
func settle(w io.Writer) {
	start := time.Now()
	busy, ok := busyOver(time.Second)
	for ok && busy > settleBusy && time.Since(start) < settleMost {
		busy, ok = busyOver(time.Second)
	}
	if waited := time.Since(start); ok && waited > 2*time.Second {
		fmt.Fprintf(w, " (waited %.0f s for the machine to settle: %.0f%% busy)", waited.Seconds(), busy*100)
	}
}

// busyOver is the share of the processors' time spent busy over d.
func busyOver(d time.Duration) (float64, bool) {
	idle0, total0, ok := cpuTimes()
	if !ok {
		return 0, false
	}
	time.Sleep(d)
	idle1, total1, ok := cpuTimes()
	if !ok || total1 <= total0 {
		return 0, false
	}
	return 1 - float64(idle1-idle0)/float64(total1-total0), true
}

// cpuTimes reads the processors' idle (with I/O wait) and total times from
// /proc/stat's first line.
func cpuTimes() (idle, total uint64, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return 0, 0, false
	}
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range fields[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	return idle, total, true
}
