package stubfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	root  = stubfs.User{Name: "root", Home: "/root"}
	user  = stubfs.User{Name: "user", UID: 1000, GID: 1000, Home: "/home/user"}
	users = []stubfs.User{root, user}
)

// space makes a sandbox's space in a new directory, with a file in its
// tmp.
func space(t *testing.T, mapped bool) *stubfs.Space {
	t.Helper()
	dir := t.TempDir()
	sp, err := stubfs.NewSpace(stubfs.Config{Root: filepath.Join(dir, "root"), Scratch: filepath.Join(dir, "scratch"),
		Users: users, Mapped: mapped})
	require.NoError(t, err)
	t.Cleanup(sp.Retire)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "root", "tmp", "mine"), []byte("sandbox"), 0o644))
	return sp
}

// run runs a script in the space as u and returns its output.
func run(t *testing.T, sp *stubfs.Space, u stubfs.User, cwd, script string) string {
	t.Helper()
	cmd, err := sp.Command(cwd, u, "sh", "-c", script)
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// mapped is whether this machine gives sandboxes their own files.
func mapped(t *testing.T) bool {
	t.Helper()
	ok := stubfs.Probe(t.TempDir())
	if !ok && os.Getenv("CI") != "" {
		t.Fatal("mount namespaces must work in CI (root, mount, chroot and nsenter)")
	}
	return ok
}

// In a mapped space a command and the file API agree on every absolute
// path: the sandbox's own files anywhere, this machine's system
// directories read-only for both; a command starts in the sandbox path it
// was given, as the user asked for when the server is root.
func TestCommandsAndTheFileAPIAgree(t *testing.T) {
	t.Parallel()
	if !mapped(t) {
		t.Skip("mount namespaces are unavailable here: the servers run processes on this machine's paths")
	}
	sp := space(t, true)
	assert.Equal(t, "sandbox", run(t, sp, root, "/", "cat /tmp/mine && mkdir -p /workspace && echo made > /workspace/new"))
	p, err := sp.Path("/workspace/new")
	require.NoError(t, err)
	made, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(made), "a file a command made is the file API's")

	p, err = sp.Path("/opt/data/x")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("from the API"), 0o644))
	assert.Equal(t, "from the API", run(t, sp, root, "/", "cat /opt/data/x"), "a file the API made is the command's")
	_, err = os.Stat("/opt/data/x")
	assert.ErrorIs(t, err, os.ErrNotExist, "and not this machine's")

	assert.Equal(t, "/home/user\n", run(t, sp, root, "/home/user", "pwd"), "the sandbox's path, not this machine's")
	host, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	assert.NotEqual(t, host+"\n", run(t, sp, root, "/", "readlink /proc/self/ns/mnt"), "not this machine's namespace")

	env, err := sp.Path("/usr/bin/env")
	require.NoError(t, err)
	assert.FileExists(t, env, "this machine's system directories are seen through the API too")
	usr, err := sp.Path("/usr/paddock-stubfs-test")
	require.NoError(t, err)
	err = os.WriteFile(usr, nil, 0o644)
	assert.True(t, errors.Is(err, syscall.EROFS), "read-only for the API: %v", err)
	cmd, err := sp.Command("/", root, "sh", "-c", "touch /usr/paddock-stubfs-test")
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "read-only for a command too")
	assert.Contains(t, string(out), "Read-only")

	passwd, err := sp.Path("/etc/passwd")
	require.NoError(t, err)
	b, err := os.ReadFile(passwd)
	require.NoError(t, err)
	assert.Contains(t, string(b), "user:x:1000:1000::/home/user:", "the provider's users")
	if os.Geteuid() == 0 {
		assert.Equal(t, "user 1000\n", run(t, sp, user, "/home/user", "echo $(id -un) $(id -u)"))
		assert.Equal(t, "root\n", run(t, sp, root, "/", "id -un"))
	}

	// Every command enters the same namespace; closed, the next one gets a
	// namespace again, with the same files.
	first := run(t, sp, root, "/", "readlink /proc/self/ns/mnt")
	assert.Equal(t, first, run(t, sp, root, "/", "readlink /proc/self/ns/mnt"))
	sp.Close()
	assert.Equal(t, "sandbox", run(t, sp, root, "/", "cat /tmp/mine"))
}

// A space that is not mapped runs on this machine's paths, from the
// cwd's directory under the root.
func TestUnmappedProcessesSeeThisMachine(t *testing.T) {
	t.Parallel()
	sp := space(t, false)
	assert.Equal(t, "sandbox", run(t, sp, root, "/tmp", "cat mine"))
	tmp, err := sp.Path("/tmp")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(sp.Root(), "tmp"), tmp)
	assert.Equal(t, tmp, strings.TrimSpace(run(t, sp, root, "/tmp", "pwd")))
}

// A missing program starts, says so on stderr and exits 127, as under the
// providers' daemons; a missing working directory exits 1.
func TestAMissingProgramExits127(t *testing.T) {
	t.Parallel()
	for _, m := range []bool{false, mapped(t)} {
		sp := space(t, m)
		cmd, err := sp.Command("/", root, "no-such-program-here")
		require.NoError(t, err)
		out, err := cmd.CombinedOutput()
		assert.Equal(t, 127, cmd.ProcessState.ExitCode(), "mapped %v: %s %v", m, out, err)
		assert.Contains(t, string(out), "no-such-program-here")

		cmd, err = sp.Command("/no/such/dir", root, "true")
		require.NoError(t, err)
		_ = cmd.Run()
		assert.Equal(t, 1, cmd.ProcessState.ExitCode(), "mapped %v", m)
	}
}

// A closed space starts its namespace again for the next command; a
// retired one starts nothing and maps no path, mapped or not.
func TestARetiredSpaceStartsNothing(t *testing.T) {
	t.Parallel()
	for _, m := range []bool{false, mapped(t)} {
		sp := space(t, m)
		sp.Close()
		assert.Equal(t, "again\n", run(t, sp, root, "/", "echo again"), "mapped %v", m)
		sp.Retire()
		_, err := sp.Command("/", root, "true")
		require.Error(t, err, "mapped %v", m)
		_, err = sp.Path("/tmp")
		require.Error(t, err, "mapped %v", m)
		sp.Retire()
	}
}

// Links resolve as the sandbox's processes follow them, an absolute
// target inside the sandbox; MkdirAll makes directories the user owns
// (where the server is root); Seen is a path as processes see it.
func TestLinksDirectoriesAndSeenPaths(t *testing.T) {
	t.Parallel()
	for _, m := range []bool{false, mapped(t)} {
		sp := space(t, m)
		require.NoError(t, sp.MkdirAll("/work/deep", 0o755, user), "mapped %v", m)
		deep, err := sp.Path("/work/deep")
		require.NoError(t, err)
		info, err := os.Stat(deep)
		require.NoError(t, err)
		assert.True(t, info.IsDir())
		if owner, ok := stubfs.Owner(info, users); ok || os.Geteuid() == 0 {
			assert.Equal(t, user, owner, "the user's directory")
		}
		for link, target := range map[string]string{"/work/abs": "/work/deep", "/work/rel": "deep/../deep", "/work/chain": "/work/abs"} {
			host, err := sp.Path(link)
			require.NoError(t, err)
			require.NoError(t, os.Symlink(target, host))
		}
		for _, link := range []string{"/work/abs", "/work/rel", "/work/chain"} {
			got, err := sp.Resolve(link + "/x/..")
			if err == nil {
				t.Errorf("mapped %v: %s/x/.. resolved to %s, though x does not exist", m, link, got)
			}
			got, err = sp.Resolve(link)
			require.NoError(t, err, "mapped %v", m)
			assert.Equal(t, "/work/deep", got, "mapped %v: %s", m, link)
		}
		loop, err := sp.Path("/work/loop")
		require.NoError(t, err)
		require.NoError(t, os.Symlink("/work/loop", loop))
		_, err = sp.Resolve("/work/loop")
		assert.ErrorIs(t, err, syscall.ELOOP)
		if m {
			assert.Equal(t, "/home/user", sp.Seen("/home/user"))
		} else {
			assert.Equal(t, filepath.Join(sp.Root(), "home", "user"), sp.Seen("/home/user"))
		}
	}
}

// A bind shows one directory of this machine inside two sandboxes at once:
// what a command of one writes there, the other's command and file API
// read.
func TestBindsAreShared(t *testing.T) {
	t.Parallel()
	if !mapped(t) {
		t.Skip("mount namespaces are unavailable here: binds need them")
	}
	shared := t.TempDir()
	spaces := make([]*stubfs.Space, 2)
	for i := range spaces {
		dir := t.TempDir()
		sp, err := stubfs.NewSpace(stubfs.Config{Root: filepath.Join(dir, "root"), Scratch: filepath.Join(dir, "scratch"),
			Users: users, Mapped: true, Binds: []stubfs.Bind{{Host: shared, At: "/mnt/shared"}}})
		require.NoError(t, err)
		t.Cleanup(sp.Retire)
		spaces[i] = sp
	}
	run(t, spaces[0], root, "/", "echo one > /mnt/shared/note")
	assert.Equal(t, "one\n", run(t, spaces[1], root, "/", "cat /mnt/shared/note"), "the other sandbox's command")
	p, err := spaces[1].Path("/mnt/shared/note")
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "one\n", string(b), "the other sandbox's file API")
	b, err = os.ReadFile(filepath.Join(shared, "note"))
	require.NoError(t, err)
	assert.Equal(t, "one\n", string(b), "this machine's directory")
}
