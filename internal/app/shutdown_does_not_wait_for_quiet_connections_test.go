package app

import (
	"context"
	"net"
	"testing"
	"time"
)

// A connection that has sent nothing (a client's spare) does not hold a
// shutdown, nor does one kept alive after a request: both are closed, and
// Shutdown ends well within its deadline.
func TestShutdownDoesNotWaitForConnectionsThatSentNothing(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	idle, err := net.Dial("tcp", r.app.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	used, err := net.Dial("tcp", r.app.Addr()) // one request, then kept alive
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	if _, err := used.Write([]byte("GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	if _, err := used.Read(buf); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // both are the server's now

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := r.app.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v: a connection that sent nothing held it", err)
	}
	r.app = nil
	_ = idle.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := idle.Read(buf); err == nil {
		t.Fatalf("the idle connection is still open (read %d bytes)", n)
	}
}
