package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestLimiterCountsPerKeyAndWindow(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	l, err := New(Deps{RDB: rdb, Keys: layout.New(prefix+"rl", 0)}, Config{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Unix(1_900_000_000, 0)
	for i := range 5 {
		ok, err := l.Allow(ctx, "alice", now)
		if err != nil || ok != (i < 3) {
			t.Fatalf("request %d of alice: %v, %v", i+1, ok, err)
		}
	}
	if ok, _ := l.Allow(ctx, "bob", now); !ok {
		t.Fatal("bob is limited by alice's requests")
	}
	if ok, _ := l.Allow(ctx, "alice", now.Add(time.Second)); !ok {
		t.Fatal("alice is still limited in the next second")
	}
}
