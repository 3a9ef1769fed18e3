package delivery

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// gatedSpills holds every FinishOutbox call carrying a spill until gate
// is closed (a spill call queued behind others, or slow to come back).
type gatedSpills struct {
	*outbox.Consumer
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedSpills) FinishOutbox(ctx context.Context, p int, ops ...outbox.OutboxOp) ([]int, error) {
	if len(ops) > 0 && ops[0].Kind == outbox.OpSpill {
		close(g.entered)
		<-g.gate
	}
	return g.Consumer.FinishOutbox(ctx, p, ops...)
}

type recordingHook struct {
	mu  sync.Mutex
	ids []string
}

func (h *recordingHook) ServeHTTP(_ http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	h.ids = append(h.ids, req.Header.Get("A2A-Notification-Id"))
	h.mu.Unlock()
}

// A prune that runs while a spill's script call is on its way (the lane
// not yet in Redis's parked set) does not unpark the lane: the item queued
// behind the spill is appended behind the spilled ones, not POSTed ahead.
func TestPruneDuringASpillKeepsTheLaneParked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &recordingHook{}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "sp", hook)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "sp", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "sp", working, working, working); err != nil {
		t.Fatal(err)
	}
	g := &gatedSpills{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{}), entered: make(chan struct{}), gate: make(chan struct{})}
	w := mustNew(t, fx.deps(g), Config{Outbox: true})
	o, ok, err := w.q.Own(ctx, 0)
	if err != nil || !ok {
		t.Fatal("own", err)
	}
	op := newOutboxPart(w, 0, o)
	op.ctx, op.lost = context.WithCancel(ctx)
	defer op.lost()
	es, err := fx.store.ReadOutbox(ctx, 0, "0-0", 100, 0)
	if err != nil || len(es) != 4 {
		t.Fatalf("outbox %d entries (%v)", len(es), err)
	}
	loaded, _, err := fx.store.LoadOutbox(ctx, 0, es, outbox.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var items []*outboxItem
	for i, e := range es {
		items = append(items, &outboxItem{e: e, h: loaded[i].Head, read: 1, loadedAt: time.Now()})
	}
	lane := es[0].Lane
	// The first three are spilled; the fourth is read meanwhile and queued
	// behind the spill (runLane then works it).
	spilled := make(chan bool)
	op.mu.Lock()
	go func() {
		ok := op.spill(lane, items[:3])
		op.mu.Unlock()
		spilled <- ok
	}()
	<-g.entered
	time.Sleep(2 * time.Millisecond)
	op.prune(ctx) // keep's once-a-minute prune
	close(g.gate)
	if !<-spilled {
		t.Fatal("spill failed")
	}
	op.mu.Lock()
	parked := op.o.Parked[lane]
	op.mu.Unlock()
	if !op.work(items[3]) {
		t.Fatal("work failed")
	}
	inLane := fx.rdb.LLen(ctx, lane).Val()
	hook.mu.Lock()
	posted := len(hook.ids)
	hook.mu.Unlock()
	if !parked || posted != 0 {
		t.Fatalf("after the spill the owner has the lane parked=%v; the 4th notification was POSTed (%d POSTs) while the 3 before it wait in the lane (%d entries)",
			parked, posted, inLane)
	}
}
