package spritestest

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// proxyRoute serves the WebSocket /v1/sprites/{name}/proxy, a TCP tunnel
// to a port in the sprite, as the SDKs' ProxySocket speaks it: the client
// sends {"host", "port"} as a JSON text message; the server connects and
// answers {"status": "connected", "target": "host:port"}, then binary
// messages carry the bytes each way until either side closes. A sprite's
// network here is this machine's, so host and port are dialled as they
// are. A connection refused is answered {"status": "error", "error": ...}
// and a normal close.
func (s *Server) proxyRoute(w http.ResponseWriter, r *http.Request, _ []byte) {
	if _, ok := s.touched(w, r); !ok {
		return
	}
	conn, ok := s.upgrade(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	var init struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	if err := conn.ReadJSON(&init); err != nil || init.Port < 1 || init.Port > 65535 {
		_ = conn.WriteJSON(map[string]string{"status": "error", "error": "invalid proxy request"})
		closeNormally(conn)
		return
	}
	if init.Host == "" {
		init.Host = "localhost"
	}
	target := net.JoinHostPort(init.Host, strconv.Itoa(init.Port))
	tcp, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		_ = conn.WriteJSON(map[string]string{"status": "error", "error": err.Error()})
		closeNormally(conn)
		return
	}
	defer tcp.Close()
	if err := conn.WriteJSON(map[string]string{"status": "connected", "target": target}); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the sprite's side to the client
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := tcp.Read(buf)
			if n > 0 && conn.WriteMessage(websocket.BinaryMessage, buf[:n]) != nil {
				break
			}
			if err != nil {
				break
			}
		}
		closeNormally(conn)
	}()
	for { // the client's side to the sprite
		kind, r, err := conn.NextReader()
		if err != nil {
			break
		}
		if kind != websocket.BinaryMessage {
			continue
		}
		if _, err := io.Copy(tcp, r); err != nil {
			break
		}
	}
	if c, ok := tcp.(*net.TCPConn); ok {
		_ = c.CloseWrite()
	}
	_ = tcp.Close()
	wg.Wait()
}

// closeNormally sends a normal close.
func closeNormally(conn *websocket.Conn) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
}

// upgradeSprite is POST /v1/sprites/{name}/upgrade: the sprite's
// environment is always the newest here, so there is nothing to do: 204.
func (s *Server) upgradeSprite(w http.ResponseWriter, r *http.Request, _ []byte) {
	if _, ok := s.touched(w, r); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}
