package app

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A v0.3 webhook that falls behind still receives, for each event, the task
// as it was right after it (folded from the stored events, since Redis
// keeps one copy of the task, not one per version).
func TestLaggingV03WebhookGetsEachVersion(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	s.answer = func(_ string, n int) (int, map[string]string, time.Duration) {
		if n == 0 {
			return 200, nil, 500 * time.Millisecond // the task ends meanwhile: every later head is a past version
		}
		return 200, nil, 0
	}
	r := deliveringRelay(t, nil)
	var task v03Task
	r.call("message/send", map[string]any{"message": v03Message("lag", nil),
		"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": s.url("/v03")}}}, &task)
	var got []string
	for _, h := range s.waitHits(t, "/v03", 5, 10*time.Second) {
		var snap struct {
			ID        string
			Status    struct{ State string }
			Artifacts []json.RawMessage
			History   []json.RawMessage
		}
		if err := json.Unmarshal(h.body, &snap); err != nil || snap.ID != task.ID {
			t.Fatalf("v0.3 notification %s", h.body)
		}
		got = append(got, snap.Status.State+"/"+strconv.Itoa(len(snap.Artifacts))+"/"+strconv.Itoa(len(snap.History)))
	}
	if want := "submitted/0/1,working/0/1,working/0/1,working/1/1,completed/1/1"; strings.Join(got, ",") != want {
		t.Fatalf("v0.3 snapshots (state/artifacts/history) %s, want %s", strings.Join(got, ","), want)
	}
}

// redisBytes sums what Redis reports for every key under prefix (on every
// master of a cluster: a cluster client's SCAN reads one node).
func redisBytes(t *testing.T, rdb redis.UniversalClient, prefix string) int64 {
	t.Helper()
	ctx := context.Background()
	var total atomic.Int64
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			n, err := c.MemoryUsage(ctx, iter.Val(), 0).Result()
			if err != nil && err != redis.Nil {
				return err
			}
			total.Add(n)
		}
		return iter.Err()
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		t.Fatalf("redisBytes: a %T", rdb)
	}
	if err != nil {
		t.Fatal(err)
	}
	return total.Load()
}

// A 1 MiB message that the demo agent answers in 50 steps, with webhooks
// that never answer, is stored about once: Redis holds the task and its
// events, not a copy of the task per event and per webhook (#15: it took
// 133 MB). The demo agent echoes the text as an artifact, which doubles the
// task's content; without the echo, the bound is 3 MiB.
func TestLargeTaskIsStoredOnce(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() // refuses connections: every attempt fails
	ln.Close()
	big := strings.Repeat("x", 1<<20)
	measure := func(webhooks, chunks int) int64 {
		rdb, prefix := redistest.New(t)
		cfg := testConfig(t)
		cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
		cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		cfg.RetryInitial = time.Hour // the notifications stay pending
		r := startWith(t, cfg)
		// The steps are 10 ms apart, so that every webhook is there for
		// every event but the first few.
		msg := map[string]any{"kind": "message", "role": "user", "messageId": "m-big", "parts": []any{map[string]any{"kind": "text", "text": big}},
			"metadata": map[string]any{"demo": map[string]any{"steps": 50, "delayMs": 10, "artifactChunks": chunks}}}
		var task v03Task
		r.call("message/send", map[string]any{"message": msg,
			"configuration": map[string]any{"blocking": false, "pushNotificationConfig": map[string]any{"url": dead + "/0"}}}, &task)
		for i := 1; i < webhooks; i++ {
			r.call("tasks/pushNotificationConfig/set", map[string]any{"taskId": task.ID,
				"pushNotificationConfig": map[string]any{"id": "w" + strconv.Itoa(i), "url": dead + "/" + strconv.Itoa(i)}}, nil)
		}
		deadline := time.Now().Add(20 * time.Second)
		for task.Status.State != "completed" {
			if time.Now().After(deadline) {
				t.Fatalf("task still %s", task.Status.State)
			}
			time.Sleep(50 * time.Millisecond)
			r.call("tasks/get", map[string]any{"id": task.ID, "historyLength": 0}, &task)
		}
		return redisBytes(t, rdb, prefix)
	}
	plain := measure(1, 0)
	echo := measure(1, 1)
	four := measure(4, 1)
	t.Logf("Redis bytes: no echo, 1 webhook %d; echo, 1 webhook %d; echo, 4 webhooks %d", plain, echo, four)
	if plain > 3<<20 {
		t.Errorf("a 1 MiB task of 52 events with one webhook takes %d bytes of Redis, want at most 3 MiB", plain)
	}
	// With the echo: 2 MiB of content, kept as the current task and as
	// the events that made it.
	if echo > 6<<20 {
		t.Errorf("a 2 MiB task (message and echo) of 53 events with one webhook takes %d bytes of Redis, want at most 6 MiB", echo)
	}
	if per := (four - echo) / 3; per > 64<<10 {
		t.Errorf("each further webhook on the task adds %d bytes of Redis, want a few KB (at most 64 KiB for 53 notifications)", per)
	}
}

// A long task's event stream is compacted back to RELAY_TASK_EVENTS_MAX_LEN
// once its webhook has caught up, and a webhook that lagged behind all of
// it still got each version as it was.
func TestLongTaskStreamIsCompacted(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	s.answer = func(_ string, n int) (int, map[string]string, time.Duration) {
		if n == 0 {
			return 200, nil, time.Second // the task ends meanwhile
		}
		return 200, nil, 0
	}
	rdb, prefix := redistest.New(t)
	cfg := testConfig(t)
	cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.TaskEventsMaxLen = 10
	r := startWith(t, cfg)
	var task v03Task
	r.call("message/send", map[string]any{"message": v03Message("long", map[string]any{"metadata": demo(map[string]any{"steps": 60, "delayMs": 1})}),
		"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": s.url("/long")}}}, &task)
	hits := s.waitHits(t, "/long", 63, 20*time.Second)
	for i, h := range hits {
		var snap struct {
			Status    struct{ State string }
			Artifacts []json.RawMessage
		}
		if err := json.Unmarshal(h.body, &snap); err != nil {
			t.Fatalf("notification %d: %s", i, h.body)
		}
		want, arts := "working", 0
		switch {
		case i == 0:
			want = "submitted"
		case i == 61:
			arts = 1
		case i == 62:
			want, arts = "completed", 1
		}
		if snap.Status.State != want || len(snap.Artifacts) != arts {
			t.Fatalf("notification %d: %s with %d artifacts, want %s with %d", i, snap.Status.State, len(snap.Artifacts), want, arts)
		}
	}
	events := r.app.store.EventsKey(task.ID)
	// The compactor looks at a stream a lagging webhook held back again
	// within 5 s, and runs every second.
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := rdb.XLen(context.Background(), events).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n <= 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the finished task's stream still has %d entries, want 10 after compaction", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
