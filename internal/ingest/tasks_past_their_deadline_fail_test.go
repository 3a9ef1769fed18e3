package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
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

// deadlineStack is one relay instance's commit path, worker side and
// deadline sweeper over a test Redis, on a clock the test moves.
type deadlineStack struct {
	rdb     redis.UniversalClient
	k       layout.Keys
	store   *taskstore.Store
	commit  *Committer
	pull    *Pull
	sweeper *DeadlineSweeper
	clock   *fakeClock
}

func newDeadlineStack(rdb redis.UniversalClient, k layout.Keys, clock *fakeClock, limits TaskLimits) *deadlineStack {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	turns := turnsOn(rdb, k)
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turns, URLs: urlsOn(rdb, k), Hub: NewHub(), Now: clock.now}, CommitterConfig{Retention: time.Hour, Limits: limits})
	pull := mustPull(PullDeps{Queue: workqueue.New(rdb, rdb, nil, k), Commit: commit, Load: commit.Load, Log: log}, PullConfig{Lease: time.Hour})
	pull.now = clock.now
	sweeper, err := NewDeadlineSweeper(DeadlineSweeperDeps{Store: turns, Commit: commit, Log: log}, DeadlineSweeperConfig{})
	if err != nil {
		panic(err)
	}
	return &deadlineStack{rdb: rdb, k: k, store: store, commit: commit, pull: pull, clock: clock, sweeper: sweeper}
}

func newDeadlineTest(t *testing.T, limits TaskLimits) *deadlineStack {
	rdb, prefix := redistest.New(t)
	return newDeadlineStack(rdb, layout.New(strings.TrimSuffix(prefix, ":"), 2), &fakeClock{t: time.UnixMilli(1_800_000_000_000)}, limits)
}

// submit creates task id (its first message naming skill, when not empty)
// and offers it to queue q, as a client's send does.
func (s *deadlineStack) submit(t *testing.T, id, skill string) {
	t.Helper()
	msg := a2a.Message{MessageID: "m-" + id, Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "go"}}}
	if skill != "" {
		msg.Metadata = json.RawMessage(`{"skill":"` + skill + `"}`)
	}
	task := a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.StateSubmitted}, History: []a2a.Message{msg}}
	if _, err := s.commit.Create(context.Background(), task, a2a.V10, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.pull.Queue("q").Start(task, msg); err != nil {
		t.Fatal(err)
	}
}

// claim claims the next task of queue q: nil when none comes.
func (s *deadlineStack) claim(t *testing.T, wait time.Duration) *Claimed {
	t.Helper()
	got, err := s.pull.Claim(context.Background(), "q", "w", wait)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (s *deadlineStack) task(t *testing.T, id string) a2a.Task {
	t.Helper()
	v, err := s.commit.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v.Task
}

// due is the time the task's deadline record lists it at; ok is false
// when it is not listed.
func (s *deadlineStack) due(t *testing.T, id string) (time.Time, bool) {
	t.Helper()
	ms, err := s.rdb.ZScore(context.Background(), s.k.Deadlines(s.k.Partition(id)), id).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(int64(ms)), true
}

// failedWith checks that task id failed at a deadline with the status
// message text.
func (s *deadlineStack) failedWith(t *testing.T, id, text string) {
	t.Helper()
	task := s.task(t, id)
	if task.Status.State != a2a.StateFailed || task.Status.Message == nil || len(task.Status.Message.Parts) != 1 ||
		task.Status.Message.Parts[0].Text != text {
		t.Fatalf("task %s: %s %+v; want failed with %q", id, task.Status.State, task.Status.Message, text)
	}
	if derr := failedAtDeadline(task); derr == nil || derr.Reason != text {
		t.Fatalf("task %s: not marked failed at a deadline (%+v)", id, derr)
	}
	if _, listed := s.due(t, id); listed {
		t.Fatalf("task %s failed, and is still listed for a deadline", id)
	}
}

// A task that waits unclaimed past its limit fails with a status message
// saying so, and is never handed to a worker afterwards: neither after the
// sweeper failed it, nor when a claim comes first.
func TestTaskPastMaxWaitFailsAndIsNeverHandedOut(t *testing.T) {
	t.Parallel()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Wait: 10 * time.Minute}})
	start := s.clock.now()
	s.submit(t, "swept", "")
	if due, ok := s.due(t, "swept"); !ok || !due.Equal(start.Add(10*time.Minute)) {
		t.Fatalf("listed at %v (%v), want %v", due, ok, start.Add(10*time.Minute))
	}
	s.clock.add(10*time.Minute - time.Millisecond)
	if n := s.sweeper.RunOnce(context.Background()); n != 0 {
		t.Fatalf("a sweep before the limit failed %d tasks", n)
	}
	s.clock.add(time.Millisecond)
	if n := s.sweeper.RunOnce(context.Background()); n != 1 {
		t.Fatalf("a sweep at the limit failed %d tasks, want 1", n)
	}
	want := "relay: the task waited 10m unclaimed; the limit is 10m (max wait)"
	s.failedWith(t, "swept", want)
	if got := s.claim(t, 200*time.Millisecond); got != nil {
		t.Fatalf("the failed task was handed out: %+v", got.View.Task.Status)
	}

	// A claim that comes after the limit, before any sweep.
	s.submit(t, "late", "")
	s.clock.add(15 * time.Minute)
	if got := s.claim(t, 200*time.Millisecond); got != nil {
		t.Fatalf("a task past its wait limit was handed out: %+v", got.View.Task.Status)
	}
	s.failedWith(t, "late", "relay: the task waited 15m unclaimed; the limit is 10m (max wait)")
}

// A claimed task that runs past its limit fails; its worker's next
// heartbeat says canceled (with the reason), and a post is refused with
// the deadline, which is a cancel to a worker.
func TestClaimedTaskPastMaxRunFailsAndItsWorkerIsTold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Wait: time.Minute, Run: 5 * time.Minute}})
	leases := map[string]string{}
	for _, id := range []string{"beats", "posts"} {
		s.submit(t, id, "")
		s.clock.add(30 * time.Second) // a wait within the limit
		c := s.claim(t, time.Second)
		if c == nil {
			t.Fatal("no claim")
		}
		leases[c.View.Task.ID] = c.Work.LeaseID
		if due, ok := s.due(t, c.View.Task.ID); !ok || !due.Equal(s.clock.now().Add(5*time.Minute)) {
			t.Fatalf("claimed task listed at %v (%v), want the claim + 5m", due, ok)
		}
	}
	// "posts" was claimed 30s after "beats"; both run past their limit.
	s.clock.add(4 * time.Minute)
	if n := s.sweeper.RunOnce(ctx); n != 0 {
		t.Fatalf("a sweep within the limit failed %d tasks", n)
	}
	if b, err := s.pull.Heartbeat(ctx, "beats", leases["beats"]); err != nil || b.Canceled {
		t.Fatalf("heartbeat within the limit: %+v, %v", b, err)
	}
	s.clock.add(2 * time.Minute)
	if n := s.sweeper.RunOnce(ctx); n != 2 {
		t.Fatalf("a sweep past the limit failed %d tasks, want 2", n)
	}
	s.failedWith(t, "beats", "relay: the task ran 6m30s; the limit is 5m (max run)")
	s.failedWith(t, "posts", "relay: the task ran 6m; the limit is 5m (max run)")

	b, err := s.pull.Heartbeat(ctx, "beats", leases["beats"])
	if err != nil || !b.Canceled || b.State != a2a.StateFailed || b.Reason != "relay: the task ran 6m30s; the limit is 5m (max run)" {
		t.Fatalf("heartbeat after the limit: %+v, %v; want canceled, failed, with the reason", b, err)
	}
	_, err = s.pull.PostOnce(ctx, "posts", leases["posts"], "k1", []a2a.Event{status(a2a.StateCompleted)})
	var derr *DeadlineError
	if !errors.As(err, &derr) || derr.Limit != "run" || !errors.Is(err, ErrTaskCanceled) {
		t.Fatalf("post after the limit: %v; want the deadline's refusal", err)
	}
	if st := s.task(t, "posts").Status.State; st != a2a.StateFailed {
		t.Fatalf("the refused post changed the task: %s", st)
	}
}

// A skill's limits replace the global ones for the tasks whose first
// message names it; a field it leaves zero keeps the global one.
func TestSkillLimitsOverrideTheGlobalOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Wait: 10 * time.Minute, Run: time.Hour},
		SkillTurn: map[string]taskstore.TurnLimits{"quick": {Wait: time.Minute}, "slow": {Wait: time.Hour, Run: 2 * time.Hour}}})
	for _, id := range []string{"plain", "quick", "slow", "other"} {
		skill := id
		if id == "plain" {
			skill = ""
		}
		s.submit(t, id, skill)
	}
	sweep := func(after time.Duration, want ...string) {
		t.Helper()
		s.clock.add(after)
		if n := s.sweeper.RunOnce(ctx); n != len(want) {
			t.Fatalf("sweep: %d failed, want %d (%v)", n, len(want), want)
		}
	}
	sweep(time.Minute, "quick")
	s.failedWith(t, "quick", "relay: the task waited 1m unclaimed; the limit is 1m (max wait)")
	sweep(9*time.Minute, "plain", "other") // a skill without limits of its own: the global ones
	s.failedWith(t, "plain", "relay: the task waited 10m unclaimed; the limit is 10m (max wait)")
	s.failedWith(t, "other", "relay: the task waited 10m unclaimed; the limit is 10m (max wait)")
	if st := s.task(t, "slow").Status.State; st != a2a.StateSubmitted {
		t.Fatalf("slow: %s after 10m, its limit is 1h", st)
	}
	c := s.claim(t, time.Second) // slow, its run limit is its skill's
	if c == nil || c.View.Task.ID != "slow" {
		t.Fatalf("claim: %+v", c)
	}
	if due, ok := s.due(t, "slow"); !ok || !due.Equal(s.clock.now().Add(2*time.Hour)) {
		t.Fatalf("slow listed at %v (%v), want the claim + its skill's 2h", due, ok)
	}

	// quick's run limit is the global one.
	q := newDeadlineStack(s.rdb, s.k, s.clock, s.commit.limits)
	q.submit(t, "quick-2", "quick")
	if c := q.claim(t, time.Second); c == nil || c.View.Task.ID != "quick-2" {
		t.Fatalf("claim: %+v", c)
	}
	if due, ok := q.due(t, "quick-2"); !ok || !due.Equal(s.clock.now().Add(time.Hour)) {
		t.Fatalf("quick-2 listed at %v (%v), want the claim + the global 1h", due, ok)
	}
}

// A task that ends in time is left alone and its deadline record goes
// with its turn; time in input-required does not count, and the client's
// answer starts a turn with limits of its own.
func TestTaskThatEndsInTimeIsUntouchedAndItsRecordRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Wait: 10 * time.Minute, Run: 10 * time.Minute}})
	s.submit(t, "t1", "")
	c := s.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	if _, ok := s.due(t, "t1"); !ok {
		t.Fatal("a claimed turn under a run limit is not listed")
	}
	if _, err := s.pull.Post(ctx, "t1", c.Work.LeaseID, []a2a.Event{status(a2a.StateWorking)}); err != nil {
		t.Fatal(err)
	}
	s.clock.add(5 * time.Minute)
	if p, err := s.pull.Post(ctx, "t1", c.Work.LeaseID, []a2a.Event{status(a2a.StateInputRequired)}); err != nil || !p.Released {
		t.Fatalf("input-required: %+v, %v", p, err)
	}
	if _, ok := s.due(t, "t1"); ok {
		t.Fatal("an interrupted task is still listed")
	}
	s.clock.add(3 * time.Hour) // the client takes its time: it does not count
	if n := s.sweeper.RunOnce(ctx); n != 0 {
		t.Fatalf("a sweep failed %d tasks waiting for their client", n)
	}
	answer := a2a.Message{MessageID: "answer", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "yes"}}}
	if _, err := s.commit.Append(ctx, "t1", a2a.Event{Kind: a2a.EventMessage, TaskID: "t1", Message: &answer},
		a2a.Event{Kind: a2a.EventStatus, TaskID: "t1", Status: &a2a.TaskStatus{State: a2a.StateWorking}}); err != nil {
		t.Fatal(err)
	}
	if due, ok := s.due(t, "t1"); !ok || !due.Equal(s.clock.now().Add(10*time.Minute)) {
		t.Fatalf("the answered task listed at %v (%v), want now + its wait limit", due, ok)
	}
	if err := s.pull.Queue("q").Start(s.task(t, "t1"), answer); err != nil {
		t.Fatal(err)
	}
	s.clock.add(9 * time.Minute)
	c = s.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim of the second turn")
	}
	s.clock.add(9 * time.Minute)
	if p, err := s.pull.Post(ctx, "t1", c.Work.LeaseID, []a2a.Event{status(a2a.StateCompleted)}); err != nil || !p.Released {
		t.Fatalf("completed: %+v, %v", p, err)
	}
	if _, ok := s.due(t, "t1"); ok {
		t.Fatal("a completed task is still listed")
	}
	if rec, err := s.store.Load(ctx, "t1"); err != nil || rec.Deadline != "" {
		t.Fatalf("record %q, %v; want none", rec.Deadline, err)
	}
	s.clock.add(time.Hour)
	if n := s.sweeper.RunOnce(ctx); n != 0 {
		t.Fatalf("a sweep failed %d finished tasks", n)
	}
	if task := s.task(t, "t1"); task.Status.State != a2a.StateCompleted {
		t.Fatalf("t1: %s, want completed", task.Status.State)
	}
}

// A worker's final post racing the sweeper (on another instance) ends in
// exactly one final state: whichever committed first; the other learns it.
func TestFinalPostRacingTheSweeperEndsInOneFinalState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	limits := TaskLimits{Turn: taskstore.TurnLimits{Run: time.Minute}}
	worker := newDeadlineTest(t, limits)
	sweeper := newDeadlineStack(worker.rdb, worker.k, worker.clock, limits)
	const tasks = 24
	outcomes := map[a2a.TaskState]int{}
	for i := range tasks {
		id := "race-" + string(rune('a'+i))
		worker.submit(t, id, "")
		c := worker.claim(t, time.Second)
		if c == nil || c.View.Task.ID != id {
			t.Fatalf("claim: %+v", c)
		}
		if _, err := worker.pull.Post(ctx, id, c.Work.LeaseID, []a2a.Event{status(a2a.StateWorking)}); err != nil {
			t.Fatal(err)
		}
		worker.clock.add(time.Minute) // due
		if due, ok := worker.due(t, id); !ok || due.After(worker.clock.now()) {
			t.Fatalf("%s: listed at %v (%v), want due now", id, due, ok)
		}
		var posted Posted
		var postErr, sweepErr error
		var failed bool
		var wg sync.WaitGroup
		wg.Go(func() {
			posted, postErr = worker.pull.PostOnce(ctx, id, c.Work.LeaseID, "final", []a2a.Event{chunk("out"), status(a2a.StateCompleted)})
		})
		wg.Go(func() { failed, sweepErr = sweeper.commit.ExpireTurn(ctx, id) })
		wg.Wait()
		if sweepErr != nil {
			t.Fatal(sweepErr)
		}
		st := worker.task(t, id).Status.State
		outcomes[st]++
		switch {
		case st == a2a.StateCompleted && postErr == nil && posted.Released && !failed:
		case st == a2a.StateFailed && failed:
			var derr *DeadlineError
			if !errors.As(postErr, &derr) {
				t.Fatalf("%s: the sweeper won; the post got %+v, %v, want the deadline's refusal", id, posted, postErr)
			}
		default:
			t.Fatalf("%s: %s, post %+v %v, sweeper failed it: %v", id, st, posted, postErr, failed)
		}
		finals := 0
		evs, err := worker.rdb.XRange(ctx, worker.store.EventsKey(id), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			var ev a2a.Event
			if err := json.Unmarshal([]byte(e.Values["e"].(string)), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Kind == a2a.EventStatus && ev.Status.State.Terminal() {
				finals++
			}
		}
		if finals != 1 {
			t.Fatalf("%s: %d final status events, want 1", id, finals)
		}
		if _, listed := worker.due(t, id); listed {
			t.Fatalf("%s: still listed after its end", id)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
