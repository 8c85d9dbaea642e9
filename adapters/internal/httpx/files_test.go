package httpx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// daemon is a file daemon that writes in place, recording what it did in
// order.
type daemon struct {
	paddock.FileManager
	mu     sync.Mutex
	events []string
	files  map[string][]byte
	stored sync.WaitGroup // the uploads' daemon sides
}

func (d *daemon) log(ev string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, ev)
}

func (d *daemon) Rename(_ context.Context, _ paddock.Handle, from, to string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, "rename")
	d.files[to] = d.files[from]
	delete(d.files, from)
	return nil
}

func (d *daemon) Remove(_ context.Context, _ paddock.Handle, p string, _ paddock.RemoveOpts) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, "remove")
	delete(d.files, p)
	return nil
}

// put is an upload as a client sees it: the daemon stores src at staging
// as it reads it, and answers once it read to the end; the client stops
// waiting when its context ends, and the daemon then still writes what it
// had read.
func (d *daemon) put(ctx context.Context, staging string, src io.Reader) error {
	d.log("put")
	answered := make(chan error, 1)
	d.stored.Add(1)
	go func() {
		defer d.stored.Done()
		var got bytes.Buffer
		_, err := io.Copy(&got, src)
		d.mu.Lock()
		d.files[staging] = got.Bytes() // what came is written, whatever happens next
		d.events = append(d.events, "stored")
		d.mu.Unlock()
		answered <- err
	}()
	select {
	case err := <-answered:
		return Transport(err)
	case <-ctx.Done():
		return Transport(ctx.Err())
	}
}

// cancelAt is a reader that ends its write's context once it gave n bytes.
type cancelAt struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAt) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
	}
	n, err := c.r.Read(p[:min(len(p), max(c.n, 1))])
	c.n -= n
	return n, err
}

// A staged write whose context ends midway ends its upload where it is,
// lets the daemon answer, and only then removes the staging file: a
// daemon still writing an upload cut short would write it after the
// removal. A whole write renames; a failed source removes.
func TestStagedEndsAnUploadBeforeRemovingIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		src    func(cancel context.CancelFunc) io.Reader
		ok     bool
		events []string
	}{
		{"whole", func(context.CancelFunc) io.Reader { return strings.NewReader("all of it") }, true,
			[]string{"put", "stored", "rename"}},
		{"context ends midway", func(cancel context.CancelFunc) io.Reader {
			return &cancelAt{r: strings.NewReader(strings.Repeat("x", 1<<20)), n: 4096, cancel: cancel}
		}, false, []string{"put", "stored", "remove"}},
		{"source fails", func(context.CancelFunc) io.Reader {
			return io.MultiReader(strings.NewReader("some"), iotest.ErrReader(errors.New("broke")))
		}, false, []string{"put", "stored", "remove"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &daemon{files: map[string][]byte{}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := Staged(ctx, d, paddock.Handle{}, "/w/f", tc.src(cancel), d.put)
			d.stored.Wait()
			assert.Equal(t, tc.events, d.events)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, map[string][]byte{"/w/f": []byte("all of it")}, d.files)
				return
			}
			require.Error(t, err)
			assert.Empty(t, slices.Collect(maps.Keys(d.files)), "nothing is left: neither the path nor a staging file")
		})
	}
}
