package outbox

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A partition with a large backlog of the lanes path is adopted in steps
// of about adoptStep tokens, not in one long script, and every lane with a
// token in the retry set or the delivery stream is found.
func TestAdoptionReadsALargeBacklogInSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixtureWith(t, 0, storeConfig{Outbox: true})
	const each = 2500
	pipe := s.rdb.Pipeline()
	for i := range each {
		pipe.ZAdd(ctx, s.k.Retries(0), redis.Z{Score: float64(i), Member: fmt.Sprintf(`{"t":"r%d","c":"c","a":2,"f":1,"n":"0.x%d"}`, i, i)})
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: s.k.Deliveries(0), Values: []any{"t", fmt.Sprintf("s%d", i), "c", "c", "a", 1, "f", 0}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	log := &commandLog{}
	s.rdb.AddHook(log)
	adopted, err := s.AdoptLanes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, c := range log.take() {
		if c == "evalsha" || c == "eval" {
			steps++
		}
	}
	parked := s.rdb.SCard(ctx, s.k.Parked(0)).Val()
	if parked != 2*each || len(adopted) != 2*each || !slices.Contains(adopted, s.k.Lane("r7", "c")) || !slices.Contains(adopted, s.k.Lane("s7", "c")) {
		t.Fatalf("%d lanes parked (%d listed), want the %d with tokens", parked, len(adopted), 2*each)
	}
	if steps < 2*each/adoptStep {
		t.Fatalf("adopted in %d script calls, want steps of about %d tokens", steps, adoptStep)
	}
	if again, err := s.AdoptLanes(ctx, 0); err != nil || len(again) != 0 {
		t.Fatalf("adopted again: %v (%v), want nothing: the partition is adopted", again, err)
	}
	if s.rdb.Exists(ctx, s.k.OutboxAdopting(0)).Val() != 0 {
		t.Fatal("the adopting mark outlives the adoption")
	}
}

// A token that moves from the stream to the retry set after the adoption
// has read the retry set is still found: the stream keeps its entry, as the
// housekeeping trim leaves an adopting partition's stream alone.
func TestAdoptionFindsATokenMovedToTheRetrySetMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lanes, _ := laneFixture(t, 2) // lanes path: two notifications in lane run/c1
	s := newFixture(lanes.rdb, storeConfig{Prefix: lanes.k.Prefix(), Partitions: 1, Outbox: true})
	phase, cursor, found, err := s.adoptStep(ctx, 0, "retries", "0") // the retry set, empty
	if err != nil || phase != "stream" || len(found) != 0 {
		t.Fatalf("first step: %s %s %v (%v)", phase, cursor, found, err)
	}
	// The lane's token fails and moves to the retry set; another lane's
	// token is delivered after it, and the housekeeping trim runs.
	retryThenTrim(t, lanes)
	var all []string
	for phase != "done" {
		if phase, cursor, found, err = s.adoptStep(ctx, 0, phase, cursor); err != nil {
			t.Fatal(err)
		}
		all = append(all, found...)
	}
	if lane := s.k.Lane("run", "c1"); !slices.Contains(all, lane) || !s.rdb.SIsMember(ctx, s.k.Parked(0), lane).Val() {
		t.Fatalf("adopted %v: lane %s, whose token moved to the retry set meanwhile, is not parked", all, lane)
	}
	// Once adopted, the stream is trimmed again (up to the last token read).
	before := s.rdb.XLen(ctx, s.k.Deliveries(0)).Val()
	if err := lanes.TrimAcked(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := s.rdb.XLen(ctx, s.k.Deliveries(0)).Val(); n >= before {
		t.Fatalf("the stream holds %d tokens after the adoption and a trim, %d before", n, before)
	}
}
