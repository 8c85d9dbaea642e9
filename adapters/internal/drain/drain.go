// Package drain reads a command's output to its end after the command's
// leader has exited. Processes the command left behind may still hold its
// output pipes (or terminal) open, so the end of file has not come; drain
// gives them a grace, then kills every process still holding the output,
// and goes on reading until the end of file, which comes once every writer
// is gone. Bytes already written are never thrown away, and no timer decides
// that the output is complete: only a writer that outlives the kill for the
// whole limit makes the output incomplete, and the caller must say so.
package drain

import (
	"os"
	"time"
)

// Policy says how long leftovers may hold the output, and how to kill
// them.
type Policy struct {
	// Grace is how long processes left by the command may keep its output
	// open before they are killed (0: at once).
	Grace time.Duration
	// Abort, when closed, ends the grace at once (the caller gave up on the
	// command: a deadline, a cancellation).
	Abort <-chan struct{}
	// Limit bounds the time a holder this process can see and kill keeps
	// the output open after the kill; past it the output is cut and
	// reported incomplete.
	Limit time.Duration
	// Unseen bounds the time the output stays open with no holder to be
	// seen (a process of this program's own between fork and exec, which
	// holds every descriptor until its exec closes them; one in a namespace
	// this process cannot look into); 0 = DefaultUnseen. It counts apart
	// from Limit: a holder nobody can kill is waited for longer.
	Unseen time.Duration
	// KillGroup, if set, kills what is left of the command's own process
	// group (or namespace) once the grace is over.
	KillGroup func()
	// Kill signals one process found holding the output; nil =
	// KillHolder (SIGKILL through a pidfd). Tests replace it.
	Kill func(pid int, held Object) error
}

// Output is a command's output as this process reads it.
type Output struct {
	// Files are our read ends (pipes, or a terminal's master). Drain closes
	// them only to cut an output it could not read to the end.
	Files []*os.File
	// Held is what the command's processes hold: the pipes (the same
	// objects as Files), or a terminal's slave side.
	Held []Object
	// Done is closed once every reader of Files has returned.
	Done <-chan struct{}
}

// pollFirst and pollMax pace the checks after the kill: a killed holder
// usually goes at once; one that forked meanwhile is found again.
const (
	pollFirst = 5 * time.Millisecond
	pollMax   = 200 * time.Millisecond
)

// Drain waits until the readers of out have reached the end of file and
// reports whether they did (true), or whether it had to cut the output
// because a holder outlived the kill for the whole limit (false). Once no
// process holds the output any more, it waits for the readers however long
// they take: what is in the pipe is finite, and it is read.
func Drain(out Output, p Policy) (complete bool) {
	if p.Kill == nil {
		p.Kill = KillHolder
	}
	grace := time.NewTimer(p.Grace)
	defer grace.Stop()
	select {
	case <-out.Done:
		return true
	case <-grace.C:
	case <-p.Abort:
	}
	if !heldOpen(out.Files) {
		<-out.Done
		return true
	}
	if p.KillGroup != nil {
		p.KillGroup()
	}
	unseen := p.Unseen
	if unseen <= 0 {
		unseen = DefaultUnseen
	}
	// Each wait counts against the bound of what the check before it
	// found: a holder to kill (Limit), or none to be seen (Unseen).
	var seenFor, unseenFor time.Duration
	last, visible := time.Now(), false
	for delay := pollFirst; ; delay = min(2*delay, pollMax) {
		if !heldOpen(out.Files) {
			<-out.Done
			return true
		}
		now := time.Now()
		if visible {
			seenFor += now.Sub(last)
		} else {
			unseenFor += now.Sub(last)
		}
		last = now
		visible = killHolders(out.Held, p.Kill) > 0 || !holdersKnown
		left := p.Limit - seenFor
		if !visible {
			left = unseen - unseenFor
		}
		if left <= 0 {
			break
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-out.Done:
			t.Stop()
			return true
		case <-t.C:
		}
	}
	for _, f := range out.Files {
		_ = f.Close()
	}
	<-out.Done
	return false
}

// killHolders kills every other process that holds one of held, and
// answers how many it found.
func killHolders(held []Object, kill func(int, Object) error) int {
	if len(held) == 0 {
		return 0
	}
	holders := Holders(held)
	for pid, obj := range holders {
		_ = kill(pid, obj)
	}
	return len(holders)
}

// DefaultUnseen bounds how long an output may stay open with no holder to
// be seen.
const DefaultUnseen = time.Minute
