package app

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// quietConns tracks the HTTP server's connections that have not sent a
// byte yet: a client's spare connection, opened and never used. fasthttp
// counts such a connection as busy (it waits for its first request, up to
// the read timeout), so it would hold a graceful shutdown that long;
// Shutdown closes them instead. A connection that has sent anything is left
// to fasthttp, which ends it between requests.
type quietConns struct {
	mu    sync.Mutex
	conns map[*firstByteConn]struct{}
}

func newQuietConns() *quietConns { return &quietConns{conns: map[*firstByteConn]struct{}{}} }

// listen wraps ln so that the connections it accepts are tracked.
func (q *quietConns) listen(ln net.Listener) net.Listener { return quietListener{Listener: ln, q: q} }

// closeAll closes every connection that has not sent a byte (none before
// the server listens).
func (q *quietConns) closeAll() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for c := range q.conns {
		_ = c.Conn.Close()
		delete(q.conns, c)
	}
}

func (q *quietConns) drop(c *firstByteConn) {
	q.mu.Lock()
	delete(q.conns, c)
	q.mu.Unlock()
}

type quietListener struct {
	net.Listener
	q *quietConns
}

func (l quietListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &firstByteConn{Conn: c, q: l.q}
	l.q.mu.Lock()
	l.q.conns[fc] = struct{}{}
	l.q.mu.Unlock()
	return fc, nil
}

// firstByteConn leaves the quiet set at its first byte read, or its close.
type firstByteConn struct {
	net.Conn
	q     *quietConns
	spoke atomic.Bool
}

func (c *firstByteConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.spoke.Load() {
		c.spoke.Store(true)
		c.q.drop(c)
	}
	return n, err
}

// Close ends a connection that has spoken with a lingering close: fasthttp
// closes right after answering a request it did not read to the end (413
// for a body over the limit, answered from its Content-Length), and a
// socket closed with unread input makes the kernel send a reset, which
// destroys the answer on its way to the client. So the relay's side is shut
// for writing (the answer is sent, then end of stream), and what the client
// still sends is read and dropped, for at most lingerFor and lingerBytes,
// before the socket is closed.
func (c *firstByteConn) Close() error {
	c.q.drop(c)
	tc, ok := c.Conn.(*net.TCPConn)
	if !ok || !c.spoke.Load() {
		return c.Conn.Close()
	}
	if err := tc.CloseWrite(); err != nil {
		return tc.Close()
	}
	go linger(tc)
	return nil
}

// A lingering close reads what the client still sends for at most
// lingerFor and lingerBytes: enough for a client that writes a whole body
// several times the default RELAY_MAX_BODY_BYTES before it reads the
// answer (Node's http client; issue #16 sent 16 MiB), on a link of 256
// Mbit/s or faster. What it reads is dropped as it comes, so a lingering
// connection holds a goroutine and a small buffer, never the bytes.
const (
	lingerFor   = 2 * time.Second
	lingerBytes = 64 << 20
)

// linger drops what the client still sends, then closes.
func linger(tc *net.TCPConn) {
	_ = tc.SetReadDeadline(time.Now().Add(lingerFor))
	_, _ = io.CopyN(io.Discard, tc, lingerBytes)
	_ = tc.Close()
}
