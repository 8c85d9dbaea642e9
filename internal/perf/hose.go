package perf

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"sync/atomic"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
)

// Hose is the fake with two more commands: "firehose" streams Chunks
// stdout events of Size bytes as fast as they are read, then exits 0;
// "idle" makes no output and no goroutine (its Next waits for the end),
// so what a live command costs is the runtime's alone.
type Hose struct {
	*fake.Adapter
	Chunks, Size int
	parked       atomic.Int64 // idle streams waiting in Next
	read         atomic.Int64 // firehose chunks handed out
}

// NewHose returns a Hose of chunks events of size bytes.
func NewHose(chunks, size int) *Hose { return &Hose{Adapter: fake.New(), Chunks: chunks, Size: size} }

// Spawn starts firehose and idle itself, anything else on the fake.
func (h *Hose) Spawn(ctx context.Context, sb paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	switch cmd.Path {
	case "firehose":
		return h.Stream(), nil
	case "idle":
		return &idleStream{parked: &h.parked}, nil
	}
	return h.Adapter.Spawn(ctx, sb, cmd, o)
}

// Stream is a firehose stream, for reading directly.
func (h *Hose) Stream() paddock.Stream { return &hoseStream{hose: h} }

// hosePattern fills every chunk after its index.
var hosePattern = bytes.Repeat([]byte("0123456789abcdef"), 1<<12)

// HoseChunk is chunk i of size bytes: i (big-endian, when size holds it),
// then a fixed pattern; each call allocates it afresh, as a real adapter
// reads each chunk into its own buffer.
func HoseChunk(i, size int) []byte {
	b := make([]byte, size)
	for n := 0; n < size; n += copy(b[n:], hosePattern) {
	}
	if size >= 8 {
		binary.BigEndian.PutUint64(b, uint64(i))
	}
	return b
}

// Parked is how many idle streams wait in Next now.
func (h *Hose) Parked() int64 { return h.parked.Load() }

// Read is how many firehose chunks were handed out.
func (h *Hose) Read() int64 { return h.read.Load() }

type hoseStream struct {
	hose *Hose
	next int
}

func (s *hoseStream) Next(ctx context.Context) (paddock.Event, error) {
	if err := ctx.Err(); err != nil {
		return paddock.Event{}, err
	}
	switch {
	case s.next < s.hose.Chunks:
		s.next++
		s.hose.read.Add(1)
		return paddock.Stdout(HoseChunk(s.next-1, s.hose.Size)), nil
	case s.next == s.hose.Chunks:
		s.next++
		return paddock.Exit(0), nil
	}
	return paddock.Event{}, io.EOF
}

func (s *hoseStream) WriteStdin(context.Context, []byte) error { return paddock.ErrCommandExited }
func (s *hoseStream) CloseStdin(context.Context) error         { return nil }
func (s *hoseStream) Close() error                             { return nil }
func (s *hoseStream) SessionID() string                        { return "" }

type idleStream struct{ parked *atomic.Int64 }

func (s *idleStream) Next(ctx context.Context) (paddock.Event, error) {
	s.parked.Add(1)
	defer s.parked.Add(-1)
	<-ctx.Done()
	return paddock.Event{}, ctx.Err()
}
func (s *idleStream) WriteStdin(context.Context, []byte) error { return nil }
func (s *idleStream) CloseStdin(context.Context) error         { return nil }
func (s *idleStream) Close() error                             { return nil }
func (s *idleStream) SessionID() string                        { return "" }
