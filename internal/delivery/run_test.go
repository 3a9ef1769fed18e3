package delivery

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// stateRecorder is a webhook that records the task state of each v1.0
// notification, in arrival order.
type stateRecorder struct {
	mu     sync.Mutex
	states []string
}

func (r *stateRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var n struct {
		Task         *struct{ Status struct{ State string } } `json:"task"`
		StatusUpdate *struct{ Status struct{ State string } } `json:"statusUpdate"`
	}
	_ = json.NewDecoder(req.Body).Decode(&n)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case n.Task != nil:
		r.states = append(r.states, n.Task.Status.State)
	case n.StatusUpdate != nil:
		r.states = append(r.states, n.StatusUpdate.Status.State)
	default:
		r.states = append(r.states, "?")
	}
}

func (r *stateRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}

// One token delivers a busy lane's heads in a row, in order, up to
// LaneRun; then the token goes back to the stream and the rest follows.
func TestProcessDeliversALaneRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &stateRecorder{}
	fx := newFixture(t, 1, "run", hook)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "run", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	done := a2a.Event{Kind: a2a.EventStatus, TaskID: "run", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateCompleted}}
	if _, err := fx.commit.Append(ctx, "run", working, working, working, done); err != nil {
		t.Fatal(err)
	}
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{LaneRun: 3})
	w.Process(ctx, fx.oneToken(t, w.consumer))
	want := []string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_WORKING"}
	if got := hook.got(); !slices.Equal(got, want) {
		t.Fatalf("one Process delivered %v, want the first %d heads %v", got, len(want), want)
	}
	// The run stopped at LaneRun: the lane's token is back in the stream.
	w.Process(ctx, fx.oneToken(t, w.consumer))
	want = append(want, "TASK_STATE_WORKING", "TASK_STATE_COMPLETED")
	if got := hook.got(); !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	if toks, _ := fx.store.ReadTokens(ctx, 0, w.consumer, 10, 10*time.Millisecond); len(toks) != 0 {
		t.Fatalf("tokens left after the lane emptied: %v", toks)
	}
}

// While tokens of other lanes wait for a worker, a worker does not go on
// with its lane: it hands the token back after one head.
func TestProcessYieldsToWaitingTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &stateRecorder{}
	fx := newFixture(t, 1, "yield", hook)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "yield", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "yield", working); err != nil {
		t.Fatal(err)
	}
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{})
	tok := fx.oneToken(t, w.consumer)
	w.waiting.Store(1) // a token of another lane waits for a worker
	w.Process(ctx, tok)
	if got := hook.got(); len(got) != 1 {
		t.Fatalf("delivered %v, want one head while another lane waits", got)
	}
	fx.oneToken(t, w.consumer) // the lane's token is back in the stream
}

// A copy of a token that waited in memory for half the reclaim idle time
// or more (by the worker's clock, from the read) may have been reclaimed
// and finished meanwhile: Begin re-claims it, finds it done, and nothing is
// POSTed, though the lane has a new head by then.
func TestTokenReadLongAgoIsReclaimedAtBegin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idRecorder{}
	fx := newFixture(t, 1, "late", hook)
	clock := time.Now()
	lease := outbox.ConsumerConfig{LaneLease: time.Minute, Now: func() time.Time { return clock }}
	w1 := mustNew(t, fx.deps(fx.store.consumer(t, lease)), Config{})
	w1.now = func() time.Time { return clock }
	late := fx.oneToken(t, w1.consumer)
	late.Read = clock

	// Another worker takes the token over and delivers the head; the task
	// then gets a new event, so the lane has a new head and token.
	w2 := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{LaneLease: time.Minute})), Config{})
	w2.Process(ctx, late)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "late", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "late", working); err != nil {
		t.Fatal(err)
	}
	if ids := hook.got(); len(ids) != 1 {
		t.Fatalf("POSTs %v, want the first notification once", ids)
	}

	clock = clock.Add(31 * time.Second) // the first copy starts, half a lane lease after its read
	w1.Process(ctx, late)
	if ids := hook.got(); len(ids) != 1 {
		t.Fatalf("the late copy of a finished token POSTed: %v", ids)
	}
}

// A webhook slower than the per-attempt timeout: the attempt ends at the
// timeout, is logged with the error class "timeout", and is retried.
func TestSlowWebhookTimesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	release := make(chan struct{})
	defer close(release)
	fx := newFixture(t, 1, "slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{Attempt: 100 * time.Millisecond})), Config{Timeout: 100 * time.Millisecond})
	w.Process(ctx, fx.oneToken(t, w.consumer)) // the webhook never answers: only the timeout ends it
	recs, _, err := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "slow", Limit: 10})
	if err != nil || len(recs) != 1 || len(recs[0].AttemptLog) != 1 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	var a Attempt
	if err := json.Unmarshal(recs[0].AttemptLog[0], &a); err != nil {
		t.Fatal(err)
	}
	if a.ErrorClass != "timeout" || a.Outcome != "retry" || recs[0].Status != "failed" {
		t.Fatalf("attempt %+v, record status %s; want a timeout, retried", a, recs[0].Status)
	}
}
