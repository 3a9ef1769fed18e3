package a2a

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// noEvents is a Streamer of a task with nothing after its snapshot.
type noEvents struct{}

func (noEvents) Acquire(context.Context) (func(), error) { return func() {}, nil }
func (noEvents) Current(_ context.Context, id string) (TaskView, error) {
	return TaskView{}, ErrTaskNotFound(id)
}
func (noEvents) Next(context.Context, string, string, time.Duration) ([]StreamEvent, error) {
	return nil, nil
}

// nopService is a Service that is never called.
type nopService struct{ Service }

// rpcFramer frames events as a JSON-RPC binding does: each result in a
// response to request id.
type rpcFramer struct{ id json.RawMessage }

func (f rpcFramer) Envelope() (head, tail []byte) {
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), f.id...), `,"result":`...), []byte("}")
}

func (f rpcFramer) Error(_ Dialect, e *Error) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.id, "error": map[string]any{"message": e.Message}})
	return b
}

// wire records what a stream hands the HTTP server: each write, and the
// time each write deadline left.
type wire struct {
	mu        sync.Mutex
	out       strings.Builder
	writes    []int
	deadlines []time.Duration
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, len(p))
	return w.out.Write(p)
}

func (w *wire) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadlines = append(w.deadlines, time.Until(t))
	return nil
}

// A stream hands a large event to the server in bounded pieces, so that
// the server never copies a whole event for a client that may not read
// it, and gives a client that would keep a large rest of it waiting only
// a short time per piece; small events keep the long write deadline. The
// bytes on the wire are the event, unchanged.
func TestSlowStreamClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  int // bytes of the task's message
		short bool
	}{
		{"small event", 1 << 10, false},
		{"large event", 5 << 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ep, err := NewEndpoint(EndpointDeps{Service: nopService{}, Streams: noEvents{}, Log: slog.New(slog.DiscardHandler)},
				StreamConfig{Poll: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			task := Task{ID: "v10", ContextID: "ctx", Status: TaskStatus{State: StateWorking},
				History: []Message{{MessageID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: strings.Repeat("x", tt.text)}}}}}
			rec := &wire{}
			sub := &subscription{ep: ep, fr: rpcFramer{id: json.RawMessage(`1`)}, d: V10, taskID: "v10", after: "1-0",
				first: &TaskView{Task: task, Dialect: V10}, release: func() {}, indexes: map[string]int{}, conn: rec, ended: true}
			sub.run(bufio.NewWriter(rec))

			for i, n := range rec.writes {
				if n > 64<<10 {
					t.Fatalf("write %d hands the server %d bytes at once", i, n)
				}
			}
			short := 0
			for _, d := range rec.deadlines {
				if d <= 5*time.Second {
					short++
				}
			}
			if last := rec.deadlines[len(rec.deadlines)-1]; last < 20*time.Second {
				t.Errorf("the last piece of the event has %v to go out, want the long write deadline", last)
			}
			if tt.short != (short > 0) {
				t.Errorf("%d of %d writes with a deadline of at most 5 s; want some: %v", short, len(rec.deadlines), tt.short)
			}
			frame := rec.out.String()
			data, ok := strings.CutPrefix(frame, "id: 1-0\ndata: ")
			if !ok || !strings.HasSuffix(data, "\n\n") {
				t.Fatalf("frame %.80q...: want one SSE event", frame)
			}
			var got struct {
				ID     int `json:"id"`
				Result struct {
					Task struct {
						History []struct{ Parts []struct{ Text string } }
					}
				}
			}
			if err := json.Unmarshal([]byte(data), &got); err != nil || got.ID != 1 || len(got.Result.Task.History) != 1 ||
				len(got.Result.Task.History[0].Parts[0].Text) != tt.text {
				t.Fatalf("event does not carry the task (%v): %.200s", err, data)
			}
		})
	}
}
