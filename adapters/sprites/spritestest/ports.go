package spritestest

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// portPoll is how often the ports watch looks at what the sprite's
// processes listen on.
const portPoll = 200 * time.Millisecond

// listener is a TCP port a sprite's process listens on.
type listener struct {
	Port    int    `json:"port"`
	Address string `json:"address"`
	PID     int    `json:"pid"`
}

// watchPorts is the WebSocket /v1/sprites/{name}/ports/watch: port_list
// with the TCP ports the sprite's processes listen on now, then
// port_opened and port_closed as that changes, until the client leaves.
// The sprite's processes are its sessions' and services' and their
// descendants; this machine's other listeners are not the sprite's.
func (s *Server) watchPorts(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.touched(w, r)
	if !ok {
		return
	}
	s.socket(w, r, func(conn *websocket.Conn) {
		gone := make(chan struct{})
		go func() {
			defer close(gone)
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					return
				}
			}
		}()
		defer func() { _ = conn.Close(); <-gone }()
		send := func(v any) bool {
			_ = conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
			return conn.WriteJSON(v) == nil
		}
		open := s.listeners(sp)
		list := make([]map[string]any, 0, len(open))
		for _, l := range sortedListeners(open) {
			list = append(list, portEvent("port_opened", l))
		}
		if !send(map[string]any{"type": "port_list", "ports": list}) {
			return
		}
		tick := time.NewTicker(portPoll)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-gone:
				return
			case <-s.Closing():
				return
			}
			now := s.listeners(sp)
			for _, l := range sortedListeners(open) {
				if _, ok := now[l.key()]; !ok && !send(portEvent("port_closed", l)) {
					return
				}
			}
			for _, l := range sortedListeners(now) {
				if _, ok := open[l.key()]; !ok && !send(portEvent("port_opened", l)) {
					return
				}
			}
			open = now
		}
	})
}

func (l listener) key() string { return net.JoinHostPort(l.Address, strconv.Itoa(l.Port)) }

func portEvent(kind string, l listener) map[string]any {
	return map[string]any{"type": kind, "port": l.Port, "address": l.Address, "pid": l.PID}
}

func sortedListeners(m map[string]listener) []listener {
	out := make([]listener, 0, len(m))
	for _, l := range m {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// listeners are the TCP ports the sprite's processes listen on, by
// address and port (read from /proc: nothing where there is none).
func (s *Server) listeners(sp *sprite) map[string]listener {
	pids := s.spriteProcesses(sp)
	owner := map[string]int{} // socket inode -> pid
	for pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if inode, ok := strings.CutPrefix(target, "socket:["); ok {
				owner[strings.TrimSuffix(inode, "]")] = pid
			}
		}
	}
	out := map[string]listener{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		lines := bufio.NewScanner(f)
		lines.Scan() // the header
		for lines.Scan() {
			fields := strings.Fields(lines.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			pid, ok := owner[fields[9]]
			if !ok {
				continue
			}
			if l, ok := parseProcAddress(fields[1]); ok {
				l.PID = pid
				out[l.key()] = l
			}
		}
		_ = f.Close()
	}
	return out
}

// parseProcAddress reads /proc/net/tcp's local address: the IP in hex, in
// the kernel's byte order by 32-bit word, then the port.
func parseProcAddress(field string) (listener, bool) {
	hexIP, hexPort, ok := strings.Cut(field, ":")
	raw, err := hex.DecodeString(hexIP)
	port, perr := strconv.ParseUint(hexPort, 16, 16)
	if !ok || err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return listener{}, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return listener{Port: int(port), Address: ip.String()}, true
}

// spriteProcesses are the pids of the sprite's sessions and services and
// of all their descendants.
func (s *Server) spriteProcesses(sp *sprite) map[int]bool {
	s.mu.Lock()
	sessions, services := sp.sessionList(), sp.serviceList()
	s.mu.Unlock()
	pids := map[int]bool{}
	for _, ss := range sessions {
		ss.mu.Lock()
		if ss.proc != nil && ss.proc.Process != nil {
			pids[ss.proc.Process.Pid] = true
		}
		ss.mu.Unlock()
	}
	for _, svc := range services {
		svc.mu.Lock()
		if svc.pid != 0 {
			pids[svc.pid] = true
		}
		svc.mu.Unlock()
	}
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		ppid, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	queue := make([]int, 0, len(pids))
	for p := range pids {
		queue = append(queue, p)
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !pids[c] {
				pids[c] = true
				queue = append(queue, c)
			}
		}
	}
	return pids
}
