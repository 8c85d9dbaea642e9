//go:build linux

package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// changes reads n changes of w (a write reported twice counted once).
func changes(t *testing.T, w paddock.FileWatch, n int) []paddock.FileEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var got []paddock.FileEvent
	for len(got) < n {
		ev, err := w.Next(ctx)
		require.NoError(t, err, "after %v", got)
		if k := len(got); k > 0 && got[k-1] == ev && ev.Change == paddock.FileWritten {
			continue
		}
		got = append(got, ev)
	}
	return got
}

// What the sandbox's own commands do to a watched directory arrives in
// order: a file created, written, renamed, removed; a directory made and
// removed. A removed watched directory ends its watch (not_found), and a
// watch nobody reads ends with watch_overflow past the backlog, never with
// a gap.
func TestWatchSeesTheSandboxsOwnChanges(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt)
			h := box(t, a, "watched")
			require.NoError(t, paddock.MakeDir(ctx, a, h, "/w", paddock.MakeDirOpts{}))
			w, err := paddock.Watch(ctx, a, h, "/w")
			require.NoError(t, err)
			defer w.Close()
			dir := paddock.HostPath(a, h, "/w")
			out, code := execOut(t, a, h, fmt.Sprintf(`cd %q && echo one > f && mv f g && rm g && mkdir d && rmdir d`, dir))
			require.Zero(t, code, out)
			require.Equal(t, []paddock.FileEvent{
				{Change: paddock.FileCreated, Path: "/w/f"},
				{Change: paddock.FileWritten, Path: "/w/f"},
				{Change: paddock.FileRenamed, Path: "/w/f"},
				{Change: paddock.FileCreated, Path: "/w/g"},
				{Change: paddock.FileRemoved, Path: "/w/g"},
				{Change: paddock.FileCreated, Path: "/w/d"},
				{Change: paddock.FileRemoved, Path: "/w/d"},
			}, changes(t, w, 7))

			require.NoError(t, paddock.Remove(ctx, a, h, "/w", paddock.RemoveOpts{Recursive: true}))
			gone, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			_, err = w.Next(gone)
			require.ErrorIs(t, err, paddock.ErrNotFound, "the watched directory is gone; holding it still: %v", holders(dir))

			require.NoError(t, paddock.MakeDir(ctx, a, h, "/busy", paddock.MakeDirOpts{}))
			busy, err := paddock.Watch(ctx, a, h, "/busy")
			require.NoError(t, err)
			defer busy.Close()
			out, code = execOut(t, a, h, fmt.Sprintf(`cd %q && i=0; while [ $i -lt %d ]; do : > f$i; i=$((i+1)); done`,
				paddock.HostPath(a, h, "/busy"), paddock.MaxWatchBacklog+100))
			require.Zero(t, code, out)
			seen := 0
			for {
				_, err := busy.Next(ctx)
				if err != nil {
					require.ErrorIs(t, err, paddock.ErrWatchOverflow)
					break
				}
				seen++
			}
			require.Equal(t, paddock.MaxWatchBacklog, seen, "the backlog, then the overflow")
		})
	}
}

// holders lists the processes whose working directory or open files are
// dir or under it: the kernel reports a removed directory's end to its
// watches only once nothing holds it.
func holders(dir string) []string {
	var found []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		links := []string{filepath.Join("/proc", p.Name(), "cwd")}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			links = append(links, filepath.Join("/proc", p.Name(), "fd", fd.Name()))
		}
		for _, l := range links {
			if target, err := os.Readlink(l); err == nil && strings.HasPrefix(target, dir) {
				cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
				found = append(found, fmt.Sprintf("%s (%s): %s", l, strings.ReplaceAll(string(cmd), "\x00", " "), target))
			}
		}
	}
	return found
}
