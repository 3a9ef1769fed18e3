package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/workqueue"
)

// offerStack is one relay instance whose tasks go to work queue "q", on
// a clock the test moves, with a re-offer sweeper.
type offerStack struct {
	rdb     redis.UniversalClient
	k       layout.Keys
	store   *taskstore.Store
	clock   *fakeClock
	commit  *Committer
	pull    *Pull
	svc     *Service
	reoffer *Reofferer
}

const reofferAfter = 10 * time.Second

// newOfferStack builds the stack; broken, the queue's Start fails (the
// work queue cannot be reached after the commit).
func newOfferStack(t *testing.T, broken bool) *offerStack {
	t.Helper()
	rdb, prefix := redistest.New(t)
	k := layout.New(prefix+"o", 4)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	clock := &fakeClock{t: time.Now()}
	hub := NewHub()
	turns := turnsOn(rdb, k)
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turns, URLs: urlsOn(rdb, k), Hub: hub, Now: clock.now}, CommitterConfig{Retention: time.Hour})
	claims := workqueue.New(rdb, rdb, nil, k)
	pull := mustPull(PullDeps{Queue: claims, Commit: commit, Load: commit.Load, Log: log}, PullConfig{Lease: time.Minute})
	var agent Agent = pull.Queue("q")
	if broken {
		agent = unreachableQueue{pull.Queue("q")}
	}
	svc := mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: NewRouter(agent, nil, nil), Log: log}, Config{})
	reoffer, err := NewReofferer(ReoffererDeps{Store: turns, Queue: claims, Leader: soleLeader{}, Holder: "test", Log: log, Now: clock.now},
		ReoffererConfig{After: reofferAfter})
	if err != nil {
		t.Fatal(err)
	}
	return &offerStack{rdb: rdb, k: k, store: store, clock: clock, commit: commit, pull: pull, svc: svc, reoffer: reoffer}
}

// unreachableQueue is the work queue "q" with its offers failing, as when
// its Redis node is unreachable right after the commit.
type unreachableQueue struct{ PullQueue }

func (unreachableQueue) Offer(context.Context, a2a.Task, a2a.Message, taskstore.Offer) error {
	return errors.New("work queue unreachable")
}

type soleLeader struct{}

func (soleLeader) Lead(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}

func (s *offerStack) send(t *testing.T, taskID, messageID string) a2a.TaskView {
	t.Helper()
	v, err := s.svc.Send(context.Background(), a2a.SendParams{Dialect: a2a.V10, TaskID: taskID,
		Message: a2a.Message{MessageID: messageID, Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "go"}}}})
	if err != nil {
		t.Fatalf("send %s: %v", messageID, err)
	}
	return v
}

// records are the offer records of the task's partition.
func (s *offerStack) records(t *testing.T, taskID string) []redis.Z {
	t.Helper()
	z, err := s.rdb.ZRangeWithScores(context.Background(), s.k.Offers(s.k.Partition(taskID)), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// queued is the number of entries in the work queue's stream.
func (s *offerStack) queued(t *testing.T) int64 {
	t.Helper()
	n, err := s.rdb.XLen(context.Background(), s.k.WorkQueue("q").Stream).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	return n
}

func (s *offerStack) claim(t *testing.T, worker string) *Claimed {
	t.Helper()
	c, err := s.pull.Claim(context.Background(), "q", worker, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("claim by %s: %v", worker, err)
	}
	return c
}

// post moves the claimed task to working, then to st.
func (s *offerStack) post(t *testing.T, c *Claimed, st a2a.TaskState) {
	t.Helper()
	if _, err := s.pull.Post(context.Background(), c.Work.TaskID, c.Work.LeaseID,
		[]a2a.Event{{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: a2a.StateWorking}},
			{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: st}}}); err != nil {
		t.Fatalf("post %s: %v", st, err)
	}
}

// watchedQueue is the work queue "q", counting the offer records of the
// task's partition when the Service hands it a turn.
type watchedQueue struct {
	PullQueue
	s    *offerStack
	seen *[]redis.Z
}

func (q watchedQueue) Offer(ctx context.Context, task a2a.Task, msg a2a.Message, o taskstore.Offer) error {
	z, err := q.s.rdb.ZRangeWithScores(ctx, q.s.k.Offers(q.s.k.Partition(task.ID)), 0, -1).Result()
	if err != nil {
		return err
	}
	*q.seen = z
	return q.PullQueue.Offer(ctx, task, msg, o)
}

// A send to a queued backend commits the task with the record of its
// offer (it is there when the backend gets the turn), and the record goes
// once the offer is in the queue (soon after: removals are gathered).
func TestSendRecordsTheOfferWithItsCommitAndDropsItOnceQueued(t *testing.T) {
	t.Parallel()
	s := newOfferStack(t, false)
	var seen []redis.Z
	s.svc.agent = NewRouter(watchedQueue{PullQueue: s.pull.Queue("q"), s: s, seen: &seen}, nil, nil)
	v := s.send(t, "", "m1")
	if len(seen) != 1 || int64(seen[0].Score) != s.clock.now().UnixMilli() {
		t.Fatalf("offer records when the turn was handed to the queue: %v; want one, at the commit's time", seen)
	}
	if s.queued(t) != 1 {
		t.Fatalf("after the send: %d queued; want 1", s.queued(t))
	}
	// The record goes within the drops' linger (taskstore.DropOfferSoon).
	waitFor(t, 10*time.Second, "the offer's record dropped", func() bool { return len(s.records(t, v.Task.ID)) == 0 })
	if c := s.claim(t, "w1"); c == nil || c.Work.TaskID != v.Task.ID || c.Message.MessageID != "m1" {
		t.Fatalf("claim = %+v, want task %s's turn m1", c, v.Task.ID)
	}
}

// A turn the commit made claimable but its relay did not offer (here: the
// queue failed; a relay killed right after the commit is the same, and
// internal/chaos tests that) stays recorded, the task is not failed, and the
// sweeper offers it once the record is older than After: a task's first
// turn, then a client's answer to input-required.
func TestTurnNotOfferedAfterItsCommitIsOfferedByTheSweeper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newOfferStack(t, true)
	v := s.send(t, "", "m1")
	if v.Task.Status.State != a2a.StateSubmitted {
		t.Fatalf("a task whose offer failed is %s, want submitted (its offer is recorded)", v.Task.Status.State)
	}
	z := s.records(t, v.Task.ID)
	if len(z) != 1 || int64(z[0].Score) != s.clock.now().UnixMilli() {
		t.Fatalf("offer records after the commit: %v; want one, at the commit's time", z)
	}
	if n, err := s.reoffer.RunOnce(ctx); n != 0 || err != nil || s.queued(t) != 0 {
		t.Fatalf("a sweep before After offered %d (%v), queued %d; want nothing", n, err, s.queued(t))
	}
	s.clock.add(reofferAfter)
	if n, err := s.reoffer.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("sweep after After: offered %d, %v; want 1", n, err)
	}
	if z := s.records(t, v.Task.ID); len(z) != 0 {
		t.Fatalf("records after the sweep: %v, want none", z)
	}
	c := s.claim(t, "w1")
	if c == nil || c.Work.TaskID != v.Task.ID || c.Message.MessageID != "m1" {
		t.Fatalf("claim after the sweep = %+v, want task %s's turn m1", c, v.Task.ID)
	}
	s.post(t, c, a2a.StateInputRequired)
	// The client's answer makes the next turn claimable: recorded the same way.
	if v := s.send(t, v.Task.ID, "m2"); v.Task.Status.State != a2a.StateWorking {
		t.Fatalf("the answered task is %s, want working", v.Task.Status.State)
	}
	s.clock.add(reofferAfter)
	if n, err := s.reoffer.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("sweep of the answer's turn: offered %d, %v; want 1", n, err)
	}
	if c := s.claim(t, "w2"); c == nil || c.Message.MessageID != "m2" {
		t.Fatalf("claim after the answer's sweep = %+v, want turn m2", c)
	}
}

// A turn offered twice (its relay offered it and died before dropping the
// record; the sweeper offered it again) runs once: the second offer is not
// granted while the first's lease is held, and nothing of it is left to
// hand out once the turn is over.
func TestTurnOfferedTwiceRunsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newOfferStack(t, false)
	task := a2a.Task{ID: "twice", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.StateSubmitted},
		History: []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "go"}}}}}
	_, offer, err := s.commit.CreateOffered(ctx, task, a2a.V10, nil, taskstore.Offer{Queue: "q", TaskID: task.ID, MessageID: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.pull.Queue("q").Offer(ctx, task, task.History[0], offer); err != nil { // offered; the record stays (a crash)
		t.Fatal(err)
	}
	s.clock.add(reofferAfter)
	if n, err := s.reoffer.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("sweep: offered %d, %v; want 1", n, err)
	}
	c := s.claim(t, "w1")
	if c == nil || c.Work.TaskID != "twice" {
		t.Fatalf("first claim = %+v", c)
	}
	if c2 := s.claim(t, "w2"); c2 != nil {
		t.Fatalf("the turn was granted twice at once: %+v", c2)
	}
	s.post(t, c, a2a.StateInputRequired) // the turn ends waiting for the client
	pending, err := s.rdb.XPending(ctx, s.k.WorkQueue("q").Stream, layout.Group).Result()
	if err != nil || pending.Count != 0 || s.queued(t) != 0 {
		t.Fatalf("after the turn: %d queued, %+v pending (%v); want nothing left to hand out", s.queued(t), pending, err)
	}
}

// A late offer of a turn that is done (a re-offer) is dropped at its
// claim, however long the task has waited for its client since; so is any
// turn of a task that is finished (canceled before anyone claimed it).
func TestOfferOfATurnThatIsOverIsDroppedAtClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newOfferStack(t, false)
	claims := workqueue.New(s.rdb, s.rdb, nil, s.k)
	v := s.send(t, "", "m1")
	c := s.claim(t, "w1")
	if c == nil || c.Work.Turn != 1 {
		t.Fatalf("claim = %+v, want turn 1", c)
	}
	s.post(t, c, a2a.StateInputRequired)
	// A late offer of turn 1 while the task waits for its client.
	if err := claims.Offer(ctx, "q", v.Task.ID, "m1", 1); err != nil {
		t.Fatal(err)
	}
	if c := s.claim(t, "w2"); c != nil || s.queued(t) != 0 {
		t.Fatalf("claim of a turn that ended in input-required = %+v (%d queued); want it dropped", c, s.queued(t))
	}
	// Another late offer of turn 1, then the client's answer m2.
	if err := claims.Offer(ctx, "q", v.Task.ID, "m1", 1); err != nil {
		t.Fatal(err)
	}
	s.send(t, v.Task.ID, "m2")
	c = s.claim(t, "w3")
	if c == nil || c.Work.MessageID != "m2" || c.Message.MessageID != "m2" {
		t.Fatalf("claim after the answer = %+v; want turn m2, turn 1 dropped", c)
	}
	if n := s.queued(t); n != 1 {
		t.Fatalf("%d queued, want 1 (turn m2's)", n)
	}
	// A task canceled before its turn is claimed: the turn is dropped.
	v2 := s.send(t, "", "m1")
	if _, err := s.svc.CancelTask(ctx, v2.Task.ID); err != nil {
		t.Fatal(err)
	}
	if c := s.claim(t, "w4"); c != nil {
		t.Fatalf("a canceled task's turn was claimed: %+v", c)
	}
}
