package ssrf

import (
	"context"
	"net"
	"testing"
	"time"
)

// FuzzProxyAnswer: whatever a proxy answers to CONNECT, connect returns
// (an error unless it is a 200 head), without panicking or reading past
// the head's cap.
func FuzzProxyAnswer(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200\r\n\r\ntunnel bytes"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, answer []byte) {
		client, server := net.Pipe()
		defer client.Close()
		go func() {
			defer server.Close()
			buf := make([]byte, 4096)
			_, _ = server.Read(buf) // the CONNECT request
			_, _ = server.Write(answer)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p := &proxy{addr: "proxy.test:3128"}
		_ = p.connect(ctx, client, "127.0.0.1:443")
	})
}
