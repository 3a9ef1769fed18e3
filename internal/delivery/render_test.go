package delivery

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A stored push config is decoded once per distinct stored value: a
// rewritten record is decoded anew, and the cache stays bounded.
func TestConfigCacheDecodesEachStoredValueOnce(t *testing.T) {
	t.Parallel()
	var c configCache
	a, err := c.open(nil, []byte(`{"id":"c","url":"https://a.example/hook","dialect":"1.0"}`))
	if err != nil || a.URL != "https://a.example/hook" {
		t.Fatalf("open = %+v, %v", a, err)
	}
	b, err := c.open(nil, []byte(`{"id":"c","url":"https://b.example/hook","dialect":"1.0"}`))
	if err != nil || b.URL != "https://b.example/hook" {
		t.Fatalf("a rewritten config = %+v, %v", b, err)
	}
	if _, err := c.open(nil, []byte(`{"id":`)); err == nil {
		t.Fatal("a broken record decoded")
	}
	for i := range configCacheSize + 10 {
		if _, err := c.open(nil, []byte(`{"id":"c`+strconv.Itoa(i)+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > configCacheSize {
		t.Fatalf("%d configs cached, want at most %d", n, configCacheSize)
	}
}

// countingTaskAt counts the task versions rebuilt for v0.3 bodies.
type countingTaskAt struct {
	*testStore
	mu sync.Mutex
	n  int
}

func (c *countingTaskAt) TaskAt(ctx context.Context, taskID, eventID string, version int64) (taskstore.TaskAt, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.testStore.TaskAt(ctx, taskID, eventID, version)
}

// Two v0.3 webhooks of one task that fell behind get the same bodies, and
// each past version is rebuilt once, not once per webhook.
func TestBodyRenderedOncePerEventAndDialect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &bodyRecorder{}
	fx := newFixture(t, 1, "twice", hook)
	for _, id := range []string{"a", "b"} {
		cfg := []byte(`{"id":"` + id + `","taskId":"twice","url":"` + fx.hookURL + `","dialect":"0.3"}`)
		if err := fx.store.SetPushConfig(ctx, "", "twice", id, cfg, "", 16); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []a2a.TaskState{a2a.StateWorking, a2a.StateWorking, a2a.StateCompleted} {
		if _, err := fx.commit.Append(ctx, "twice", a2a.Event{Kind: a2a.EventStatus, TaskID: "twice", Status: &a2a.TaskStatus{State: st}}); err != nil {
			t.Fatal(err)
		}
	}
	q := &countingTaskAt{testStore: fx.store}
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Tasks = q }), Config{})
	fx.drain(t, w)
	hook.mu.Lock()
	defer hook.mu.Unlock()
	// The fixture's v1.0 config gets the task and 3 updates; a and b the
	// 3 updates (versions 2 to 4) each.
	if len(hook.order) != 10 {
		t.Fatalf("%d notifications, want 10", len(hook.order))
	}
	if q.n != 3 {
		t.Fatalf("versions read %d times for two v0.3 webhooks, want 3 (once each)", q.n)
	}
}
