package bench

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/a2arelay/relay/webhook"
)

// The ceiling's bodies are v1.0 notifications as relay sends them: a
// receiver decodes the task, the working updates and completed, of the
// right task; the sink measures each status update from its emitNs, and
// the completed one marks the task done.
func TestCeilingBodiesAreRelayNotifications(t *testing.T) {
	t.Parallel()
	cfg := Config{Steps: 3, Delay: 20 * time.Millisecond}
	sent := time.Now().Add(-time.Second)
	s := &sink{seen: map[string]bool{}, token: []byte("tok")}
	want := []webhook.State{webhook.StateSubmitted, webhook.StateWorking, webhook.StateWorking, webhook.StateWorking, webhook.StateCompleted}
	for k, state := range want {
		body := notificationBody(nil, cfg, 7, "task-1", "ctx-1", k, sent)
		n, err := webhook.Decode(webhook.V10, body)
		if err != nil {
			t.Fatalf("notification %d: %v: %s", k, err, body)
		}
		kind := webhook.KindStatusUpdate
		if k == 0 {
			kind = webhook.KindTask
		}
		if n.Kind != kind || n.State != state || n.TaskID != "task-1" || n.ContextID != "ctx-1" {
			t.Fatalf("notification %d: kind %s, state %s, task %q, context %q: %s", k, n.Kind, n.State, n.TaskID, n.ContextID, body)
		}
		var c fasthttp.RequestCtx
		c.Request.SetBody(body)
		c.Request.Header.Set(webhook.HeaderID, string(rune('a'+k)))
		c.Request.Header.Set(webhook.HeaderToken, "tok")
		c.Request.Header.Set(webhook.HeaderTokenV1, "tok")
		s.serve(&c)
		if measured := len(s.latencies); measured != k || k > 0 && s.latencies[k-1] < time.Second {
			t.Fatalf("after notification %d: latencies %v, want %d of at least 1s", k, s.latencies, k)
		}
	}
	if s.wrong.Load() != 0 || len(s.seen) != len(want) {
		t.Fatalf("wrong token %d, seen %d", s.wrong.Load(), len(s.seen))
	}
	ch, ok := s.done.Load("task-1")
	if !ok {
		t.Fatal("the completed notification did not mark the task done")
	}
	select {
	case <-ch.(chan struct{}):
	default:
		t.Fatal("the completed notification did not mark the task done")
	}
}
