package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
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

// pullStack is the worker side of one relay instance over a test Redis.
type pullStack struct {
	rdb    redis.UniversalClient
	k      layout.Keys
	store  *taskstore.Store
	commit *Committer
	pull   *Pull
}

func newPullStack(rdb redis.UniversalClient, k layout.Keys) *pullStack {
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, k), URLs: urlsOn(rdb, k), Hub: NewHub()}, CommitterConfig{Retention: time.Hour})
	pull := mustPull(PullDeps{Queue: workqueue.New(rdb, rdb, nil, k), Commit: commit, Load: commit.Load,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, PullConfig{Lease: time.Minute})
	return &pullStack{rdb: rdb, k: k, store: store, commit: commit, pull: pull}
}

// claimed creates task id (working, with a push config, so that every
// event makes a notification), queues it and claims it: the lease id.
func (s *pullStack) claimed(t *testing.T, id string) string {
	t.Helper()
	ctx := context.Background()
	task := a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.StateWorking},
		History: []a2a.Message{{MessageID: "m-" + id, Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "go"}}}}}
	if _, err := s.commit.Create(ctx, task, a2a.V10, []a2a.PushConfig{{ID: "c1", TaskID: id, URL: "https://example.test/hook", Dialect: a2a.V10}}); err != nil {
		t.Fatal(err)
	}
	if err := s.pull.Queue("q-"+id).Start(task, task.History[0]); err != nil {
		t.Fatal(err)
	}
	got, err := s.pull.Claim(ctx, "q-"+id, "w", time.Second)
	if err != nil || got == nil {
		t.Fatalf("claim: %v, %v", got, err)
	}
	return got.Work.LeaseID
}

// counts are a task's committed events and its notifications (named by
// its event stream, or listed in its delivery index).
func (s *pullStack) counts(t *testing.T, id string) (events, notes int64) {
	t.Helper()
	ctx := context.Background()
	events, err := s.rdb.XLen(ctx, s.store.EventsKey(id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The configs the stream's entries name, and what the delivery index lists.
	es, err := s.rdb.XRange(ctx, s.store.EventsKey(id), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		notes += int64(len(layout.DecodeEventEntry(e.Values).Configs))
	}
	indexed, err := s.rdb.ZCard(ctx, s.k.TaskDeliveries(id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return events, notes + indexed
}

func chunk(text string) a2a.Event {
	return a2a.Event{Kind: a2a.EventArtifact, Append: true,
		Artifact: &a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}}
}

func status(st a2a.TaskState) a2a.Event {
	return a2a.Event{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: st}}
}

func newTestStack(t *testing.T) *pullStack {
	rdb, prefix := redistest.New(t)
	return newPullStack(rdb, layout.New(strings.TrimSuffix(prefix, ":"), 2))
}

// A post sent again with its idempotency key (its answer was lost) gets the
// first answer and commits nothing: no event, no notification; that holds
// for a post that ended the lease and the task too, whose retry would
// otherwise be refused (lease over, task finished).
func TestWorkerPostsRetriedWithTheSameKeyApplyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStack(t)
	lease := s.claimed(t, "t1")
	before, notesBefore := s.counts(t, "t1")

	first, err := s.pull.PostOnce(ctx, "t1", lease, "key-1", []a2a.Event{chunk("a"), chunk("b")})
	if err != nil || first.Replayed || first.State != a2a.StateWorking || first.Released || first.ExpiresAt.IsZero() {
		t.Fatalf("first post: %+v, %v", first, err)
	}
	again, err := s.pull.PostOnce(ctx, "t1", lease, "key-1", []a2a.Event{chunk("a"), chunk("b")})
	if err != nil || !again.Replayed || again.State != first.State || again.Released != first.Released || !again.ExpiresAt.Equal(first.ExpiresAt) {
		t.Fatalf("retry: %+v, %v; want the first answer %+v, replayed", again, err, first)
	}
	if ev, notes := s.counts(t, "t1"); ev != before+2 || notes != notesBefore+2 {
		t.Fatalf("after a post and its retry: %d events, %d notifications; want %d and %d", ev, notes, before+2, notesBefore+2)
	}

	// The final post, and its retry after the lease and the task ended.
	done, err := s.pull.PostOnce(ctx, "t1", lease, "key-2", []a2a.Event{chunk("c"), status(a2a.StateCompleted)})
	if err != nil || !done.Released || done.State != a2a.StateCompleted {
		t.Fatalf("final post: %+v, %v", done, err)
	}
	again, err = s.pull.PostOnce(ctx, "t1", lease, "key-2", []a2a.Event{chunk("c"), status(a2a.StateCompleted)})
	if err != nil || !again.Replayed || !again.Released || again.State != a2a.StateCompleted {
		t.Fatalf("retry of the final post: %+v, %v; want the first answer (completed, released)", again, err)
	}
	if ev, notes := s.counts(t, "t1"); ev != before+4 || notes != notesBefore+4 {
		t.Fatalf("after the final post and its retry: %d events, %d notifications; want %d and %d", ev, notes, before+4, notesBefore+4)
	}
	// Without a key, the same retry is refused: the key is what replays.
	if _, err := s.pull.Post(ctx, "t1", lease, []a2a.Event{chunk("c"), status(a2a.StateCompleted)}); err == nil {
		t.Fatal("a keyless post after the end was accepted")
	}
}

// The same key with other events, or under another lease, is refused with
// ErrKeyReused and commits nothing, whether the lease still holds or not.
func TestWorkerPostKeyReusedForOtherEventsIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStack(t)
	lease := s.claimed(t, "t2")
	if _, err := s.pull.PostOnce(ctx, "t2", lease, "key-1", []a2a.Event{chunk("a")}); err != nil {
		t.Fatal(err)
	}
	ev, notes := s.counts(t, "t2")
	for name, post := range map[string]func() error{
		"other events": func() error {
			_, err := s.pull.PostOnce(ctx, "t2", lease, "key-1", []a2a.Event{chunk("b")})
			return err
		},
		"more events": func() error {
			_, err := s.pull.PostOnce(ctx, "t2", lease, "key-1", []a2a.Event{chunk("a"), chunk("a")})
			return err
		},
		"another lease": func() error {
			_, err := s.pull.PostOnce(ctx, "t2", lease+"x", "key-1", []a2a.Event{chunk("a")})
			return err
		},
	} {
		if err := post(); !errors.Is(err, ErrKeyReused) {
			t.Errorf("%s under a used key: err = %v, want ErrKeyReused", name, err)
		}
	}
	if _, err := s.pull.PostOnce(ctx, "t2", lease, "key-2", []a2a.Event{status(a2a.StateCompleted)}); err != nil {
		t.Fatal(err)
	}
	// After the end (the lease is over): still the key's error, not lease_lost.
	if _, err := s.pull.PostOnce(ctx, "t2", lease, "key-2", []a2a.Event{status(a2a.StateFailed)}); !errors.Is(err, ErrKeyReused) {
		t.Errorf("other events under the final post's key: err = %v, want ErrKeyReused", err)
	}
	if e, n := s.counts(t, "t2"); e != ev+1 || n != notes+1 {
		t.Fatalf("%d events and %d notifications, want %d and %d: only the final post's", e, n, ev+1, notes+1)
	}
}

// Identical posts racing (a retry that overtakes its first send, on two
// relay instances) commit once: the loser gets the winner's answer.
func TestIdenticalWorkerPostsRacingCommitOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	k := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	a, b := newPullStack(rdb, k), newPullStack(rdb, k)
	lease := a.claimed(t, "t3")
	ev, notes := a.counts(t, "t3")
	const posts = 20
	for i := range posts {
		key := "key-" + strconv.Itoa(i)
		events := []a2a.Event{chunk(key)}
		if i == posts-1 {
			events = append(events, status(a2a.StateCompleted))
		}
		var wg sync.WaitGroup
		answers := make([]Posted, 2)
		for j, s := range []*pullStack{a, b} {
			wg.Go(func() {
				var err error
				// (Post fills in the events' task id: each its own copy.)
				if answers[j], err = s.pull.PostOnce(ctx, "t3", lease, key, slices.Clone(events)); err != nil {
					t.Errorf("post %s on instance %d: %v", key, j, err)
				}
			})
		}
		wg.Wait()
		if answers[0].State != answers[1].State || answers[0].Released != answers[1].Released || !answers[0].ExpiresAt.Equal(answers[1].ExpiresAt) {
			t.Errorf("post %s: answers differ: %+v and %+v", key, answers[0], answers[1])
		}
	}
	if e, n := a.counts(t, "t3"); e != ev+posts+1 || n != notes+posts+1 {
		t.Fatalf("%d events and %d notifications after %d racing pairs, want %d and %d", e, n, posts, ev+posts+1, notes+posts+1)
	}
}
