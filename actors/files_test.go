package actors_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A download the caller neither reads to its end nor closes belongs to its
// sandbox's actor: destroying the sandbox ends it with an error, never a
// short read that looks whole, and nothing of it is left running (goleak).
func TestADestroyEndsTheFileStreamsOfItsSandbox(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	big := bytes.Repeat([]byte("x"), 4<<20)
	require.NoError(t, a.WriteFile(ctx, h, "/big", 0o644, bytes.NewReader(big)))
	rc, err := a.ReadFile(ctx, h, "/big")
	require.NoError(t, err)
	defer rc.Close()
	first := make([]byte, 1)
	_, err = io.ReadFull(rc, first)
	require.NoError(t, err)

	require.NoError(t, a.Destroy(ctx, h))
	rest, err := io.ReadAll(rc)
	require.Error(t, err, "a download cut by the destroy ends with an error")
	assert.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Less(t, len(rest)+1, len(big), "the destroy cut it short")
}

// A download left unread does not hold Shutdown up: the runtime ends it.
func TestShutdownEndsAnUnreadDownload(t *testing.T) {
	t.Parallel()
	f := fake.New()
	t.Cleanup(f.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: f}})
	require.NoError(t, err)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/big", 0o644, bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))))
	rc, err := a.ReadFile(ctx, h, "/big")
	require.NoError(t, err)
	defer rc.Close()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, rt.Shutdown(sctx), "an unread download is no goroutine Shutdown waits for in vain")
	_, err = io.ReadAll(rc)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
}

// stalling is a fake whose WriteFile reads one byte, says so, and reads
// the rest only once released, as a slow provider would; its ReadFile and
// WriteFile panic for the paths that ask.
type stalling struct {
	*fake.Adapter
	readOne, release chan struct{}
	after            chan error // what the read after the release answered
}

func (s *stalling) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	switch path {
	case "/panic":
		panic("the adapter broke")
	case "/stall":
		one := make([]byte, 1)
		_, err := r.Read(one)
		s.readOne <- struct{}{}
		<-s.release
		_, err = r.Read(one)
		s.after <- err
		return err
	}
	return s.Adapter.WriteFile(ctx, h, path, mode, r)
}

func (s *stalling) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	if path == "/panic" {
		return panickingReader{}, nil
	}
	return s.Adapter.ReadFile(ctx, h, path)
}

type panickingReader struct{}

func (panickingReader) Read([]byte) (int, error) { panic("the reader broke") }
func (panickingReader) Close() error             { return nil }

// countingReader counts its reads, and those after done is set.
type countingReader struct {
	done  atomic.Bool
	late  atomic.Int64
	inner io.Reader
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.done.Load() {
		c.late.Add(1)
	}
	return c.inner.Read(p)
}

// Nothing reads the caller's content once its WriteFile has returned, even
// when the caller gave up while the adapter still wanted bytes.
func TestNothingReadsTheContentOnceWriteFileReturned(t *testing.T) {
	t.Parallel()
	s := &stalling{Adapter: fake.New(), readOne: make(chan struct{}, 1), release: make(chan struct{}), after: make(chan error, 1)}
	t.Cleanup(s.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: s}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	body := &countingReader{inner: strings.NewReader("content")}
	wctx, cancel := context.WithCancel(ctx)
	returned := make(chan error, 1)
	go func() { returned <- a.WriteFile(wctx, h, "/stall", 0o644, body) }()
	<-s.readOne
	cancel()
	err = <-returned
	body.done.Store(true)
	require.ErrorIs(t, err, context.Canceled, "the caller's end is its answer")
	close(s.release)
	assert.Error(t, <-s.after, "the adapter's read after the return is refused")
	assert.Zero(t, body.late.Load(), "the caller's reader was not read after WriteFile returned")
}

// An adapter's panic in a file call is an answer, never a crash: in
// WriteFile the call's error, in a download's reader the reader's error.
func TestFilePanicsAreAnswers(t *testing.T) {
	t.Parallel()
	s := &stalling{Adapter: fake.New()}
	t.Cleanup(s.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: s}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	err = a.WriteFile(ctx, h, "/panic", 0o644, strings.NewReader("x"))
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
	rc, err := a.ReadFile(ctx, h, "/panic")
	require.NoError(t, err)
	defer rc.Close()
	_, err = io.ReadAll(rc)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
}

// failingReader fails after its first bytes with an error of its own type.
type failingReader struct{ sent bool }

type readerBroke struct{}

func (readerBroke) Error() string { return "the caller's reader broke" }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.sent {
		return 0, readerBroke{}
	}
	f.sent = true
	return copy(p, "partial"), nil
}

// A write that failed because the caller's reader did answers the
// reader's error too (errors.As finds it), though it never crossed a
// message.
func TestAWriteFailedByTheCallersReaderKeepsItsError(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	err = a.WriteFile(ctx, h, "/f", 0o644, &failingReader{})
	require.Error(t, err)
	var broke readerBroke
	assert.True(t, errors.As(err, &broke), "errors.As finds the reader's error: %v", err)
	var op *paddock.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "write_file", op.Op)
}

// Many downloads and uploads at once each get their own bytes.
func TestFileStreamsAtOnce(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			want := bytes.Repeat([]byte{byte(i)}, 64<<10+i)
			path := "/f" + itoa(i)
			if !assert.NoError(t, a.WriteFile(ctx, h, path, 0o644, bytes.NewReader(want))) {
				return
			}
			rc, err := a.ReadFile(ctx, h, path)
			if !assert.NoError(t, err) {
				return
			}
			defer rc.Close()
			got, err := io.ReadAll(rc)
			assert.NoError(t, err)
			assert.Equal(t, want, got, path)
		})
	}
	wg.Wait()
}
