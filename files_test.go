package paddock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCleanPath(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in, want string
		ok       bool
	}{
		"absolute":          {"/tmp/a", "/tmp/a", true},
		"cleaned":           {"/tmp//a/./b/", "/tmp/a/b", true},
		"root":              {"/", "/", true},
		"relative":          {"tmp/a", "", false},
		"empty":             {"", "", false},
		"climbing":          {"/tmp/../etc", "", false},
		"climbing at end":   {"/tmp/..", "", false},
		"a NUL byte":        {"/tmp/a\x00b", "", false},
		"dots in a name":    {"/tmp/a..b/...", "/tmp/a..b/...", true},
		"a leading dot dot": {"/..", "", false},
		"the longest name":  {"/tmp/" + strings.Repeat("n", 255), "/tmp/" + strings.Repeat("n", 255), true},
		"a name too long":   {"/tmp/" + strings.Repeat("n", 256), "", false},
		"the longest path":  {"/" + strings.Repeat("d/", 2047) + "f", "/" + strings.Repeat("d/", 2047) + "f", true},
		"a path too long":   {"/" + strings.Repeat("d/", 2048) + "f", "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := paddock.CleanPath(tc.in)
			require.Equal(t, err, paddock.ValidatePath(tc.in), "one rule: CleanPath refuses what ValidatePath does")
			if !tc.ok {
				require.ErrorIs(t, err, paddock.ErrInvalid)
				if strings.Contains(tc.in, "\x00") {
					assert.Contains(t, err.Error(), "NUL", "the message names the fault")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// The facade validates before it looks at the adapter, refuses what would
// harm the whole sandbox, and answers not_supported without the capability.
func TestFileOperationsFacade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fake.New()
	t.Cleanup(f.Reset)
	h, err := f.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.ErrorIs(t, paddock.Remove(ctx, f, h, "/", paddock.RemoveOpts{Recursive: true}), paddock.ErrInvalid, "the root")
	require.ErrorIs(t, paddock.Rename(ctx, f, h, "/a", "/a/b"), paddock.ErrInvalid, "into itself")
	require.ErrorIs(t, paddock.Rename(ctx, f, h, "/", "/b"), paddock.ErrInvalid, "the root")
	require.ErrorIs(t, paddock.MakeDir(ctx, f, h, "/d", paddock.MakeDirOpts{Mode: 0o4755}), paddock.ErrInvalid, "setuid bits")
	_, err = paddock.ListDir(ctx, f, h, "relative")
	require.ErrorIs(t, err, paddock.ErrInvalid)

	require.NoError(t, paddock.MakeDir(ctx, f, h, "/d", paddock.MakeDirOpts{}))
	info, err := paddock.Stat(ctx, f, h, "/d")
	require.NoError(t, err)
	assert.Equal(t, paddock.FileDir, info.Type)
	assert.EqualValues(t, 0o755, info.Mode, "the default mode")

	without := fake.New(fake.WithCapabilities(paddock.NewCapabilitySet()))
	t.Cleanup(without.Reset)
	hw, err := without.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	_, err = paddock.ListDir(ctx, without, hw, "/")
	require.ErrorIs(t, err, paddock.ErrNotSupported)
	require.ErrorIs(t, paddock.MakeDir(ctx, without, hw, "/d", paddock.MakeDirOpts{}), paddock.ErrNotSupported)
}

func TestMakeDirNeeded(t *testing.T) {
	t.Parallel()
	dir := paddock.FileInfo{Type: paddock.FileDir}
	file := paddock.FileInfo{Type: paddock.FileRegular}
	tests := map[string]struct {
		tree    map[string]paddock.FileInfo // what stat finds
		parents bool
		needed  bool
		err     error
	}{
		"a new directory":                 {map[string]paddock.FileInfo{"/a": dir}, false, true, nil},
		"a directory there":               {map[string]paddock.FileInfo{"/a": dir, "/a/b": dir}, false, false, paddock.ErrAlreadyExists},
		"a directory there, with parents": {map[string]paddock.FileInfo{"/a": dir, "/a/b": dir}, true, false, nil},
		"a file there, with parents":      {map[string]paddock.FileInfo{"/a": dir, "/a/b": file}, true, false, paddock.ErrAlreadyExists},
		"no parent":                       {map[string]paddock.FileInfo{}, false, false, paddock.ErrNotFound},
		"no parent, with parents":         {map[string]paddock.FileInfo{}, true, true, nil},
		"a parent that is a file":         {map[string]paddock.FileInfo{"/a": file}, false, false, paddock.ErrInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stat := func(p string) (paddock.FileInfo, error) {
				if fi, ok := tc.tree[p]; ok {
					return fi, nil
				}
				return paddock.FileInfo{}, paddock.ErrNotFound
			}
			needed, err := paddock.MakeDirOpts{Parents: tc.parents}.Needed("/a/b", stat)
			assert.Equal(t, tc.needed, needed)
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
		})
	}
	_, err := paddock.MakeDirOpts{}.Needed("/a/b", func(string) (paddock.FileInfo, error) { return paddock.FileInfo{}, paddock.ErrUnavailable })
	require.ErrorIs(t, err, paddock.ErrUnavailable, "trouble reading is not absence")
}

// WriteSource answers a failed write with the reader's own failure: typed
// as it is, any other as invalid(file_source) wrapping it; without one,
// the write's own error.
func TestWriteSourceFailure(t *testing.T) {
	t.Parallel()
	broke := errors.New("the disk under the caller's reader went away")
	typed := fmt.Errorf("%w: the caller's cap", paddock.ErrFileTooLarge)
	transport := &paddock.UnavailableError{Detail: "the upload was cut"}
	for name, tc := range map[string]struct {
		src       io.Reader
		want      []error
		transient bool
	}{
		"a reader that ended":  {strings.NewReader("all of it"), []error{transport}, true},
		"an untyped failure":   {iotest.ErrReader(broke), []error{broke, paddock.ErrInvalid}, false},
		"a typed failure":      {io.MultiReader(strings.NewReader("some"), iotest.ErrReader(typed)), []error{paddock.ErrFileTooLarge}, false},
		"a failure after data": {iotest.TimeoutReader(strings.NewReader("abcdef")), []error{iotest.ErrTimeout, paddock.ErrInvalid}, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := paddock.NewWriteSource(tc.src)
			_, _ = io.Copy(io.Discard, iotest.OneByteReader(src))
			err := src.Failure(transport)
			for _, want := range tc.want {
				assert.ErrorIs(t, err, want)
			}
			assert.Equal(t, tc.transient, paddock.IsTransient(err))
		})
	}
	assert.NoError(t, paddock.NewWriteSource(strings.NewReader("")).Failure(nil))
}

func TestStagingPath(t *testing.T) {
	t.Parallel()
	a, b := paddock.StagingPath("/tmp/dir/file.txt"), paddock.StagingPath("/tmp/dir/file.txt")
	assert.NotEqual(t, a, b, "unique to the call")
	assert.Equal(t, "/tmp/dir", path.Dir(a), "beside the path")
	assert.True(t, strings.HasPrefix(path.Base(a), "."), "hidden")
	assert.True(t, paddock.IsStagingPath(a))
	for _, p := range []string{"/tmp/dir/file.txt", "/tmp/.paddock-.part", "/tmp/.paddock-0123456789abcdeg.part", "/tmp/.paddock-0123456789abcdef.partx", "/tmp/x.paddock-0123456789abcdef.part", "/tmp/0123456789abcdef.part"} {
		assert.False(t, paddock.IsStagingPath(p), p)
	}
}

// listWatch yields its events, then io.EOF.
type listWatch struct{ events []paddock.FileEvent }

func (w *listWatch) Next(context.Context) (paddock.FileEvent, error) {
	if len(w.events) == 0 {
		return paddock.FileEvent{}, io.EOF
	}
	ev := w.events[0]
	w.events = w.events[1:]
	return ev, nil
}
func (w *listWatch) Close() error { return nil }

// watchingAdapter is the fake with a scripted watch.
type watchingAdapter struct {
	*fake.Adapter
	events []paddock.FileEvent
}

func (a watchingAdapter) Watch(context.Context, paddock.Handle, string) (paddock.FileWatch, error) {
	return &listWatch{events: a.events}, nil
}

// A staged write shows in a watch as the write of its path: the staging
// file's changes are hidden, its rename becomes its path's create and
// write; other changes pass as they came.
func TestWatchShowsAStagedWriteAsAWrite(t *testing.T) {
	t.Parallel()
	staging := paddock.StagingPath("/w/a.txt")
	ev := func(c paddock.FileChange, p string) paddock.FileEvent { return paddock.FileEvent{Change: c, Path: p} }
	a := watchingAdapter{Adapter: fake.New(), events: []paddock.FileEvent{
		ev(paddock.FileCreated, staging), ev(paddock.FileWritten, staging), ev(paddock.FileRenamed, staging),
		ev(paddock.FileCreated, "/w/a.txt"),
		ev(paddock.FileCreated, "/w/b.txt"), ev(paddock.FileRenamed, "/w/b.txt"), ev(paddock.FileCreated, "/w/c.txt"),
		ev(paddock.FileCreated, staging), ev(paddock.FileRemoved, staging),
		ev(paddock.FileRemoved, "/w/c.txt"),
	}}
	w, err := paddock.Watch(context.Background(), a, paddock.Handle{Provider: paddock.ProviderFake, Name: "x"}, "/w")
	require.NoError(t, err)
	var got []paddock.FileEvent
	for {
		e, err := w.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, e)
	}
	assert.Equal(t, []paddock.FileEvent{
		ev(paddock.FileCreated, "/w/a.txt"), ev(paddock.FileWritten, "/w/a.txt"),
		ev(paddock.FileCreated, "/w/b.txt"), ev(paddock.FileRenamed, "/w/b.txt"), ev(paddock.FileCreated, "/w/c.txt"),
		ev(paddock.FileRemoved, "/w/c.txt"),
	}, got)
	require.NoError(t, w.Close())
}
