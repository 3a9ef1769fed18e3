package workqueue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

func newClaims(t *testing.T) (*Claims, context.Context) {
	rdb, prefix := redistest.New(t)
	return New(rdb, rdb, nil, layout.New(prefix+"c", 0)), context.Background()
}

func TestClaimsLeaseLifecycle(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if w, err := c.Claim(ctx, "q", "w1", time.Second, 50*time.Millisecond); w != nil || err != nil {
		t.Fatalf("claim of an empty queue = %v, %v", w, err)
	}
	if err := c.Offer(ctx, "q", "task-1", "m1", 1); err != nil {
		t.Fatal(err)
	}
	const ttl = time.Second
	w, err := c.Claim(ctx, "q", "w1", ttl, time.Second)
	if err != nil || w == nil || w.TaskID != "task-1" || w.MessageID != "m1" || w.Attempt != 1 {
		t.Fatalf("claim = %+v, %v", w, err)
	}
	if q, err := QueueOf(w.LeaseID); q != "q" || err != nil {
		t.Fatalf("QueueOf = %q, %v", q, err)
	}
	// Renewing keeps the lease past its first ttl: nobody else gets the task.
	for range 3 {
		time.Sleep(ttl / 2)
		if err := c.Renew(ctx, w.LeaseID, "task-1", LeaseRenew, ttl); err != nil {
			t.Fatalf("renew: %v", err)
		}
	}
	if w2, _ := c.Claim(ctx, "q", "w2", ttl, 100*time.Millisecond); w2 != nil {
		t.Fatalf("a renewed lease was taken over: %+v", w2)
	}
	// Without renewal it expires and the next claim takes the task over.
	time.Sleep(ttl + 100*time.Millisecond)
	w2, err := c.Claim(ctx, "q", "w2", ttl, time.Second)
	if err != nil || w2 == nil || w2.TaskID != "task-1" || w2.Attempt != 2 {
		t.Fatalf("claim after expiry = %+v, %v", w2, err)
	}
	if err := c.Renew(ctx, w.LeaseID, "task-1", LeaseRenew, time.Second); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("old lease renew = %v, want ErrLeaseLost", err)
	}
	if err := c.Renew(ctx, w2.LeaseID, "task-1", LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Renew(ctx, w2.LeaseID, "task-1", LeaseRenew, time.Second); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renew after done = %v, want ErrLeaseLost", err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if w3, _ := c.Claim(ctx, "q", "w3", ttl, 100*time.Millisecond); w3 != nil {
		t.Fatalf("finished work offered again: %+v", w3)
	}
}

func TestClaimsReleaseOffersAtOnce(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if err := c.Offer(ctx, "q", "task-2", "m1", 1); err != nil {
		t.Fatal(err)
	}
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil {
		t.Fatalf("claim = %v, %v", w, err)
	}
	if err := c.Renew(ctx, w.LeaseID, "task-2", LeaseRelease, time.Minute); err != nil {
		t.Fatal(err)
	}
	w2, err := c.Claim(ctx, "q", "w2", time.Minute, 200*time.Millisecond)
	if err != nil || w2 == nil || w2.TaskID != "task-2" || w2.Attempt != 2 {
		t.Fatalf("claim after release = %+v, %v", w2, err)
	}
}

func TestClaimsLongPollWakesOnOffer(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	got := make(chan *Work, 1)
	go func() {
		w, _ := c.Claim(ctx, "q", "w1", time.Minute, 5*time.Second)
		got <- w
	}()
	time.Sleep(100 * time.Millisecond)
	if err := c.Offer(ctx, "q", "task-3", "m1", 1); err != nil {
		t.Fatal(err)
	}
	if w := <-got; w == nil || w.TaskID != "task-3" {
		t.Fatalf("long poll got %+v", w)
	}
}

func TestQueueOfRefusesForgedLeases(t *testing.T) {
	for _, id := range []string{"", "nodot", "!!!.x", ".x"} {
		if _, err := QueueOf(id); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("QueueOf(%q) = %v, want ErrLeaseLost", id, err)
		}
	}
}
