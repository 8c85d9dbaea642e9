//go:build linux

package remote_test

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitFiles sets this process's limit of open files to n.
func limitFiles(n uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
}

// A serving node whose process may hold 512 open files keeps serving a
// proven peer while 600 connections that never speak come at it (before
// the gate it accepted each for good, until the process ran out of
// descriptors and a spawn failed with "too many open files"), and its
// descriptors return to where they were once they go.
func TestSilentFloodUnderAFileLimit(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	addr := freeAddr(t)
	lease := 10 * time.Second
	serving, ready := startChild(t, "serve", addrEnv+"="+addr, certsEnv+"="+writeCerts(t, ca, "serve"), leaseEnv+"="+lease.String(),
		providerEnv+"=local", rootEnv+"="+t.TempDir(), nofileEnv+"=512")
	require.Equal(t, "ready", ready)
	fds := func() int {
		entries, err := os.ReadDir("/proc/" + strconv.Itoa(serving.cmd.Process.Pid) + "/fd")
		require.NoError(t, err)
		return len(entries)
	}
	rt := drivingRuntime(t, ca, addr, paddock.ProviderLocal, lease)
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	run := func(i int) {
		t.Helper()
		s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("/bin/sh", "-c", "echo "+strconv.Itoa(i)), paddock.SpawnOpts{Detachable: true})
		require.NoError(t, err, "spawn %d", i)
		stdout, _, terminals := collect(t, s, time.Minute)
		require.Len(t, terminals, 1)
		assert.IsType(t, &messages.Exit{}, terminals[0])
		assert.Equal(t, strconv.Itoa(i)+"\n", string(stdout))
	}
	run(0)
	baseline := fds()

	silent := make([]net.Conn, 0, 600)
	t.Cleanup(func() {
		for _, c := range silent {
			_ = c.Close()
		}
	})
	for range 600 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		silent = append(silent, c)
	}
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return backlog(t, port) == 0 || fds() >= 500 }, time.Minute, 10*time.Millisecond,
		"the node takes every connection off its backlog, or runs out of descriptors trying")
	assert.Less(t, fds(), baseline+100, "the flood holds a bounded number of the node's descriptors")
	for i := 1; i <= 5; i++ {
		run(i) // during the flood
	}

	for _, c := range silent {
		require.NoError(t, c.Close())
	}
	silent = silent[:0]
	require.Eventually(t, func() bool { return fds() <= baseline }, time.Minute, 20*time.Millisecond,
		"the node's descriptors return to their baseline (%d)", baseline)
}

// backlog is how many connections wait to be accepted on the loopback
// listener at port (its receive queue in /proc/net/tcp).
func backlog(t *testing.T, port string) int {
	t.Helper()
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	table, err := os.ReadFile("/proc/net/tcp")
	require.NoError(t, err)
	local := fmt.Sprintf("0100007F:%04X", p)
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 4 && f[1] == local && f[3] == "0A" { // listening
			_, rx, _ := strings.Cut(f[4], ":")
			n, err := strconv.ParseInt(rx, 16, 64)
			require.NoError(t, err)
			return int(n)
		}
	}
	require.Fail(t, "no listener", "at %s", local)
	return 0
}
