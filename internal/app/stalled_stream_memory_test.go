package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// stalledReader opens SubscribeToTask for taskID on a raw connection and
// never reads the answer, as a client that stopped reading does.
func stalledReader(t *testing.T, r *relay, taskID string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": map[string]any{"id": taskID}})
	req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	return c
}

// bigTask starts a demo task whose message holds size bytes of text and
// that keeps working (a status event a second) for a long while.
func bigTask(t *testing.T, r *relay, size int) string {
	t.Helper()
	var res struct{ Task v10Task }
	msg := v10Message("big", map[string]any{"metadata": demo(map[string]any{"steps": 100, "delayMs": 6000})})
	msg["parts"] = []any{map[string]any{"text": strings.Repeat("x", size)}}
	r.call("SendMessage", map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": true}}, &res)
	return res.Task.ID
}

// memory returns the heap in use and the resident set size, in MB. Two
// collections empty the sync.Pools (json's encoders keep their buffers
// there), so the heap figure is what is still referenced.
func memory() (heap, rss float64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = float64(ms.HeapInuse) / (1 << 20)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				rss = kb / 1024
			}
		}
	}
	return heap, rss
}

// TestStalledStreamsMemory measures what stalled SSE readers of a large
// task cost relay: 30 SubscribeToTask streams on a task with a 4 MiB
// message, whose clients never read. It reports figures rather than
// asserting them (they depend on the machine), and runs only when asked:
//
//	RELAY_SSE_MEMORY_REPRO=1 go test ./internal/app/ -run TestStalledStreamsMemory -v
//
// It is not parallel: the heap figures are the process's.
func TestStalledStreamsMemory(t *testing.T) {
	if os.Getenv("RELAY_SSE_MEMORY_REPRO") == "" {
		t.Skip("set RELAY_SSE_MEMORY_REPRO=1 to measure")
	}
	const streams, size = 30, 4 << 20
	r := startRelay(t, func(c *config.Config) {
		c.StreamKeepAlive = time.Hour
		c.MaxMessageBytes, c.Security.ClientMaxStorageBytes = 2*size, 0 // a task of size bytes
	})
	id := bigTask(t, r, size)
	heap0, rss0 := memory()
	t.Logf("before: heap %.0f MB, RSS %.0f MB", heap0, rss0)
	conns := make([]net.Conn, streams)
	for i := range conns {
		conns[i] = stalledReader(t, r, id)
	}
	start := time.Now()
	var peakHeap, peakRSS float64
	for closed := 0; time.Since(start) < 40*time.Second && closed < 5; {
		time.Sleep(time.Second)
		heap, rss := memory()
		peakHeap, peakRSS = max(peakHeap, heap), max(peakRSS, rss)
		open := r.app.streams.Open()
		t.Logf("%2.0fs: %d streams open, heap %.0f MB, RSS %.0f MB", time.Since(start).Seconds(), open, heap, rss)
		if open == 0 {
			if closed == 0 {
				// A stalled client that reads again, once dropped, gets what
				// reached it, then the end of the connection.
				_ = conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
				n, err := io.Copy(io.Discard, conns[0])
				t.Logf("the first stalled client, reading again once dropped, reads %d bytes, then %v", n, err)
			}
			closed++
		}
	}
	t.Logf("peak with %d stalled streams: heap +%.0f MB, RSS +%.0f MB", streams, peakHeap-heap0, peakRSS-rss0)
	for _, c := range conns {
		c.Close()
	}
}
