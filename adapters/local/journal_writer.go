package local

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
)

// A session's output reaches its journal in two steps, so that the reader
// of the command's output never waits for the disk or for compression:
// write queues each record in the in-memory tail, and the session's writer
// goroutine packs the queued records (compressing output where that pays),
// puts them on disk, many per write, and only then shows them to
// subscribers (who read them from the tail while it holds them): a
// subscriber never sees output a later attacher could miss because the
// runtime died before writing it. Once the queue holds maxPending bytes,
// the reader waits for the writer (the command then waits for its output
// to be read, as it would for a slow disk), so memory stays bounded.

// tailRecord is one journal record kept in memory. Its place in the
// journal is known once the writer has packed it.
type tailRecord struct {
	kind byte
	// data is the output, or a terminal record's body; once written it is
	// a copy sized to it that never changes. Until then a large read
	// stays in the buffer of readBuffers it was read into (read), and the
	// writer copies it.
	data []byte
	read bool
	off  int64 // where the record starts in the journal, once written
	size int   // the record's size in the journal, once written
}

// memory is what a queued record holds.
func (r tailRecord) memory() int { return cap(r.data) }

// diskRecord is a record as the journal holds it.
type diskRecord struct {
	kind    byte
	data    []byte  // the output, or its compressed form
	scratch *[]byte // the buffer data lives in when compressed, until written
}

// maxTail bounds the written records a session's in-memory tail keeps
// for later readers, maxLag those it keeps for a subscriber of this
// process that has not read them yet (beyond that a subscriber reads them
// from the journal file), and maxPending what is queued for the disk.
const (
	maxTail    = 4 << 20
	maxLag     = 16 << 20
	maxPending = 16 << 20
)

// maxBatch is the most records one write puts on disk, and maxBatchBytes
// the most output: a batch is a fraction of the tail, so the subscribers
// that keep up read it from memory before the tail lets it go.
const (
	maxBatch      = 128
	maxBatchBytes = maxTail / 4
)

// append journals p, one read of output in a buffer of readBuffers, and
// reports whether it keeps the buffer. A small read is copied at once; a
// large one is queued in its buffer, and the writer copies it, so the
// reader of a fast command only reads. Either way the record's bytes never
// change once written, and the tail hands them to every subscriber as they
// are.
func (s *session) append(kind byte, p []byte) (kept bool) {
	if len(p) < readChunk/4 {
		s.write(tailRecord{kind: kind, data: sealed(p)})
		return false
	}
	s.write(tailRecord{kind: kind, data: p, read: true})
	return true
}

// sealed is a copy of p for a record: its capacity is its length, so a
// subscriber that appends to the bytes it was handed gets a new array, and
// never writes where another subscriber's append would.
func sealed(p []byte) []byte {
	c := bytes.Clone(p)
	return c[:len(c):len(c)]
}

// finish queues the terminal record, waits until the journal is on disk,
// and marks the session done.
func (s *session) finish(record []byte) {
	s.mu.Lock()
	s.end = record
	s.mu.Unlock()
	s.write(tailRecord{kind: record[0], data: record[recHeader:]})
	<-s.flushed
	_ = s.out.Close()
	_ = os.WriteFile(filepath.Join(s.dir, doneFile), record, 0o644)
	close(s.exited)
}

// write queues one record (output, or the terminal record) in the
// in-memory tail for the writer. An output record that would take the
// journal past its cap is cut to fit, and the command is killed; what it
// prints after that is dropped.
func (s *session) write(r tailRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	terminal := r.kind == recExit || r.kind == recError
	queued := false
	defer func() {
		if r.read && !queued {
			recycle(r.data)
		}
	}()
	if s.done || (s.capped && !terminal) {
		return
	}
	if !terminal {
		if room := s.a.journalLimit - s.output; int64(len(r.data)) > room {
			r.data = r.data[:max(room, 0)]
			s.capped = true
			defer s.kill() // after the record is queued
			if len(r.data) == 0 {
				return
			}
		}
		for s.pending >= maxPending && s.broken == nil {
			s.drained.Wait()
		}
	}
	if s.broken == nil {
		s.tail = append(s.tail, r)
		s.unwritten++
		s.pending += r.memory()
		if !terminal {
			s.output += int64(len(r.data))
		}
		queued = true
	}
	s.done = terminal
	if s.broken != nil { // nothing is queued: subscribers must learn of the end now
		s.publish()
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// writeJournal is the session's writer: it packs queued records and puts
// them on disk, in order, until the terminal record is there (or a write
// failed), then closes flushed.
func (s *session) writeJournal() {
	defer s.a.wg.Done()
	defer close(s.flushed)
	var (
		batch  = make([]tailRecord, 0, maxBatch)
		held   [][]byte // the read buffers the batch's output was copied from
		disk   = make([]diskRecord, 0, maxBatch)
		size   int64 // bytes of whole records in the journal
		packer packer
	)
	for {
		s.mu.Lock()
		for s.unwritten == 0 && !(s.done || s.broken != nil) {
			s.mu.Unlock()
			<-s.kick
			s.mu.Lock()
		}
		if s.unwritten == 0 || s.broken != nil {
			s.mu.Unlock()
			return // done, or broken: nothing more reaches the disk
		}
		// Only this goroutine removes records from the tail, so the
		// batch keeps its place in it while the lock is released.
		first := len(s.tail) - s.unwritten
		batch, queued := batch[:0], 0
		for _, r := range s.tail[first:min(len(s.tail), first+maxBatch)] {
			if len(batch) > 0 && queued+len(r.data) > maxBatchBytes {
				break
			}
			batch = append(batch, r)
			queued += len(r.data)
		}
		s.mu.Unlock()

		disk, held = disk[:0], held[:0]
		for i := range batch {
			r := &batch[i]
			if r.read {
				held = append(held, r.data)
				r.data, r.read = sealed(r.data), false
			}
			d := diskRecord{kind: r.kind, data: r.data}
			if r.kind == recStdout || r.kind == recStderr {
				d.kind, d.data, d.scratch = packer.pack(r.kind, r.data)
			}
			r.off, r.size = size, recHeader+len(d.data)
			size += int64(r.size)
			disk = append(disk, d)
		}
		err := writeRecords(s.out, disk)
		for _, d := range disk {
			if d.scratch != nil {
				scratchBuffers.Put(d.scratch)
			}
		}

		s.mu.Lock()
		if err != nil {
			s.broken = err
			s.a.log.Error().Err(err).Str("session", s.rec.ID).Msg("local: journal write failed; output is lost")
		} else {
			s.written = size
		}
		for i, r := range batch {
			s.pending -= s.tail[first+i].memory()
			s.tailBytes += len(r.data)
			s.tail[first+i] = r
		}
		s.unwritten -= len(batch)
		for _, p := range held {
			recycle(p) // no record holds it any more
		}
		s.trim()
		if s.done && s.unwritten == 0 {
			s.terminalWritten = true
		}
		s.publish()
		s.drained.Broadcast()
		s.mu.Unlock()
	}
}

// trim lets go of the tail's oldest written records past maxTail that
// every subscriber has read, and past maxLag whoever has not (on mu). The
// newest written record stays.
func (s *session) trim() {
	slowest := int64(math.MaxInt64) // the lowest offset a subscriber is still to read
	for st := range s.subscribers {
		slowest = min(slowest, st.at.Load())
	}
	for len(s.tail) > s.unwritten+1 {
		first, kept := s.tail[0], s.tailBytes
		read := first.off+int64(first.size) <= slowest
		if kept <= maxTail || (!read && kept <= maxLag) {
			return
		}
		s.tailBytes -= len(first.data)
		s.tail[0] = tailRecord{}
		s.tail = s.tail[1:]
	}
}

// publish wakes the subscribers (on mu).
func (s *session) publish() {
	close(s.changed)
	s.changed = make(chan struct{})
}
