package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
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

// Stalled readers of a large task cost relay a bounded amount of memory,
// whatever their number: the streams opening on the task at once share one
// read of it and one rendering of its first event, and each holds that
// shared event, not a copy, and beyond it at most its buffer limit. (Each
// stream reading and rendering the task itself took the heap up by some
// 280 MB for 30 streams on a 4 MiB task.) The heap is measured, not the
// RSS: its peak, sampled while the streams open, with the collector
// keeping little garbage, so that the figure is what was held at once.
// It is not parallel: the heap figures are the process's.
func TestStalledStreamsOfALargeTaskHoldBoundedMemory(t *testing.T) {
	const streams, size = 30, 4 << 20
	r := startRelay(t, func(c *config.Config) {
		c.StreamKeepAlive = time.Hour
		c.MaxMessageBytes, c.Security.ClientMaxStorageBytes = 2*size, 0 // a task of size bytes
	})
	id := bigTask(t, r, size)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := make(chan uint64)
	stop := make(chan struct{})
	go func() {
		var top uint64
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapAlloc)
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	conns := make([]net.Conn, streams)
	for i := range conns {
		conns[i] = stalledReader(t, r, id)
		defer conns[i].Close()
	}
	// Each client reads the head of its stream, up to the first bytes of the
	// task, then stops reading: by then its stream has read and rendered the
	// task.
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		var got []byte
		buf := make([]byte, 512)
		for !strings.Contains(string(got), "xxxx") {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("the stream sent %q, then %v", got, err)
			}
			got = append(got, buf[:n]...)
		}
	}
	close(stop)
	grew := float64(<-peak-base.HeapAlloc) / (1 << 20)
	// One read of the task (the reply, its decoding and the record: some 4
	// copies), one rendering (2 more), the shared event, and for each stream
	// its buffer limit and the server's few chunks: about 40 MB; without
	// sharing, 280.
	bound := float64(8*size+streams*(config.Defaults().StreamMaxBuffer+256<<10)) / (1 << 20)
	t.Logf("the heap grew by at most %.0f MB with %d stalled streams on a %d MiB task (bound %.0f MB)", grew, streams, size>>20, bound)
	if grew > bound {
		t.Errorf("the heap grew by %.0f MB with %d stalled streams on a %d MiB task, want at most %.0f MB", grew, streams, size>>20, bound)
	}
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
