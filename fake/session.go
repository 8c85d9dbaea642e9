package fake

import (
	"sync"
	"time"

	"github.com/paddockhq/paddock"
)

// session is one spawned command: its script runner, the buffer of every
// output event it emitted (for replay), its terminal event once recorded,
// and the streams subscribed to it. Subscribers are not removed when the
// command ends, only when they detach.
type session struct {
	id      string
	name    string // SpawnOpts.Name, if any
	command string
	created time.Time
	now     func() time.Time

	mu       sync.Mutex
	buffer   []paddock.Event      // output events, in emission order
	terminal *paddock.Event       // the recorded exit or error
	subs     map[*stream]struct{} // current subscribers
	stdin    []stdinItem          // writes waiting for the runner
	ended    bool                 // the runner stopped: no more stdin is taken
	killed   bool                 // a kill was asked: the runner emits nothing more
	active   time.Time            // last emission or stdin write

	stdinReady chan struct{} // poked when stdin arrives (capacity 1)
	kill       chan struct{} // closed to stop the runner
	killOnce   sync.Once
	done       chan struct{} // closed when the runner goroutine has returned
}

// stdinItem is one write, or the end of stdin.
type stdinItem struct {
	data []byte
	eof  bool
}

func newSession(id, name string, cmd paddock.Cmd, now func() time.Time) *session {
	t := now()
	return &session{
		id: id, name: name, command: cmd.Line(), created: t, active: t, now: now,
		subs:       map[*stream]struct{}{},
		stdinReady: make(chan struct{}, 1),
		kill:       make(chan struct{}),
		done:       make(chan struct{}),
	}
}

// info describes the session for ListSessions.
func (s *session) info() paddock.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := paddock.Session{ID: s.id, Name: s.name, Command: s.command, CreatedAt: s.created, LastActivityAt: s.active,
		State: paddock.SessionRunning}
	if s.terminal != nil {
		info.Ended(*s.terminal)
	}
	return info
}

// live reports whether the runner still runs.
func (s *session) live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended
}

// subscribe adds a new stream that first receives the whole buffer, then
// the recorded terminal event or every later event. Replay and subscription
// happen under one lock, so nothing is lost or duplicated between them.
func (s *session) subscribe(sessionID string) *stream {
	st := newStream(s, sessionID)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.buffer {
		st.push(ev)
	}
	if s.terminal != nil {
		st.push(*s.terminal)
		return st
	}
	s.subs[st] = struct{}{}
	return st
}

// run interprets the script; it is the session's only emitter of events.
func (s *session) run(script []instr) {
	defer close(s.done)
	for _, in := range script {
		switch in.op {
		case opOut:
			if !s.emit(paddock.Stdout(in.data)) {
				return
			}
		case opErr:
			if !s.emit(paddock.Stderr(in.data)) {
				return
			}
		case opExit:
			s.finish(paddock.Exit(in.code))
			return
		case opDrop:
			s.finish(paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}))
			return
		case opStay:
			s.stay()
			return
		}
	}
	s.finish(paddock.Exit(0))
}

// emit records and fans out one output event; it reports false (and ends the
// runner) once a kill was asked.
func (s *session) emit(ev paddock.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed {
		s.ended = true
		return false
	}
	s.buffer = append(s.buffer, ev)
	s.active = s.now()
	for st := range s.subs {
		st.push(ev)
	}
	return true
}

// finish records the terminal event and sends it to every subscriber,
// unless a kill was asked (the killer records its own verdict).
func (s *session) finish(ev paddock.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if !s.killed {
		s.recordTerminal(ev)
	}
}

// recordTerminal records ev and fans it out if no terminal was recorded
// yet; it reports whether it did. The caller holds s.mu.
func (s *session) recordTerminal(ev paddock.Event) bool {
	if s.terminal != nil {
		return false
	}
	s.terminal = &ev
	for st := range s.subs {
		st.push(ev)
	}
	return true
}

// stay echoes each stdin write as stdout "echo:<data>" until stdin ends
// (exit 0) or a kill arrives.
func (s *session) stay() {
	for {
		s.mu.Lock()
		if s.killed {
			s.ended = true
			s.mu.Unlock()
			return
		}
		items := s.stdin
		s.stdin = nil
		for _, it := range items {
			if it.eof {
				s.ended = true
				s.recordTerminal(paddock.Exit(0))
				s.mu.Unlock()
				return
			}
			ev := paddock.Stdout(append([]byte("echo:"), it.data...))
			s.buffer = append(s.buffer, ev)
			s.active = s.now()
			for st := range s.subs {
				st.push(ev)
			}
		}
		s.mu.Unlock()
		select {
		case <-s.stdinReady:
		case <-s.kill:
		}
	}
}

// stop kills the runner, waits until it has returned, and then records
// verdict for the subscribers if the command had not ended on its own. It
// reports whether verdict was recorded. Concurrent stops record one verdict.
func (s *session) stop(verdict paddock.Event) bool {
	s.mu.Lock()
	s.killed = true
	s.mu.Unlock()
	s.killOnce.Do(func() { close(s.kill) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordTerminal(verdict)
}

// writeStdin queues p for the runner if st is still subscribed and the
// runner lives; otherwise the command has exited (for this subscriber).
func (s *session) writeStdin(st *stream, p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[st]; !ok || s.ended {
		return paddock.ErrCommandExited
	}
	s.stdin = append(s.stdin, stdinItem{data: append([]byte(nil), p...)})
	s.active = s.now()
	s.poke()
	return nil
}

// closeStdin queues the end of stdin if st is still subscribed (even after
// the command ended: then it is a no-op).
func (s *session) closeStdin(st *stream) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[st]; !ok {
		return paddock.ErrCommandExited
	}
	if !s.ended {
		s.stdin = append(s.stdin, stdinItem{eof: true})
		s.poke()
	}
	return nil
}

// unsubscribe removes st; the runner keeps running.
func (s *session) unsubscribe(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, st)
}

// poke wakes the runner without blocking. The caller holds s.mu.
func (s *session) poke() {
	select {
	case s.stdinReady <- struct{}{}:
	default:
	}
}
