package ingest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// badQueue fails every offer to queue "bad" (say its cluster node is
// down), counting them, and passes the others to next.
type badQueue struct {
	next   Offerer
	failed *atomic.Int64
}

func (b badQueue) Offer(ctx context.Context, queue, taskID, messageID string, turn int64) error {
	if queue == "bad" {
		b.failed.Add(1)
		return errors.New("node down")
	}
	return b.next.Offer(ctx, queue, taskID, messageID, turn)
}

// lockedBuffer is a log sink that Run's goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// recordsBadThenGood records, in one partition, an offer to queue "bad"
// and after it one to queue "q".
func recordsBadThenGood(t *testing.T, s *offerStack, store *taskstore.Store) {
	t.Helper()
	ids := []string{"task-xa", ""}
	for i := 0; ids[1] == ""; i++ { // the good record in the bad one's partition, after it
		if id := "task-y" + string(rune('a'+i)); s.k.Partition(id) == s.k.Partition(ids[0]) {
			ids[1] = id
		}
	}
	for i, q := range []string{"bad", "q"} {
		if _, err := store.Commit(context.Background(), taskstore.Commit{TaskID: ids[i], Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{}`)},
			Deliver: []bool{false}, UpdatedAt: s.clock.now(), Offer: &taskstore.Offer{Queue: q, MessageID: "m1"}}); err != nil {
			t.Fatal(err)
		}
		s.clock.add(1)
	}
	s.clock.add(reofferAfter)
}

// A record whose offer fails is skipped: the records after it (other
// queues, other partitions) are offered in the same look, and it is kept
// for the next.
func TestOneFailingReofferDoesNotHoldUpTheOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newOfferStack(t, false)
	d := s.reoffer.d
	var failed atomic.Int64
	d.Queue = badQueue{next: d.Queue, failed: &failed}
	r, err := NewReofferer(d, s.reoffer.cfg)
	if err != nil {
		t.Fatal(err)
	}
	recordsBadThenGood(t, s, s.store)
	n, err := r.RunOnce(ctx)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Fatalf("RunOnce = %d, %v; want 1 offered and an error counting 1 of 2 failed", n, err)
	}
	if s.queued(t) != 1 {
		t.Fatalf("%d offers in queue q after the look, want 1: the bad queue's record blocks it", s.queued(t))
	}
	due, err := d.Store.DueOffers(ctx, s.clock.now(), 10)
	if err != nil || len(due) != 1 || due[0].Queue != "bad" {
		t.Fatalf("records left = %v, %v; want the bad queue's only", due, err)
	}
}

// The leader's looks log failed offers in one line per look, at most once
// every reofferLogEvery, with their count.
func TestFailingReoffersAreLoggedOncePerInterval(t *testing.T) {
	t.Parallel()
	s := newOfferStack(t, false)
	d := s.reoffer.d
	var failed atomic.Int64
	d.Queue = badQueue{next: d.Queue, failed: &failed}
	var logs lockedBuffer
	d.Log = slog.New(slog.NewTextHandler(&logs, nil))
	r, err := NewReofferer(d, ReoffererConfig{After: reofferAfter, Every: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	recordsBadThenGood(t, s, s.store)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitLooks := func(n int64) {
		t.Helper()
		want := failed.Load() + n
		for deadline := time.Now().Add(10 * time.Second); failed.Load() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d failed offers within 10s", failed.Load())
			}
		}
	}
	warnings := func() int { return strings.Count(logs.String(), "level=WARN") }
	waitLooks(5)
	if w := warnings(); w != 1 || !strings.Contains(logs.String(), "1 of 2 recorded offers failed") {
		t.Fatalf("%d warnings after 5 failing looks, want 1 counting the failures:\n%s", w, logs.String())
	}
	s.clock.add(reofferLogEvery)
	waitLooks(2)
	if w := warnings(); w != 2 {
		t.Fatalf("%d warnings a reofferLogEvery later, want 2:\n%s", w, logs.String())
	}
}
