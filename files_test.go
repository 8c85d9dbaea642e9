package paddock_test

import (
	"context"
	"testing"

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
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := paddock.CleanPath(tc.in)
			if !tc.ok {
				require.ErrorIs(t, err, paddock.ErrInvalid)
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
