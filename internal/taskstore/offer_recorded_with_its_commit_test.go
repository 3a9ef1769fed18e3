package taskstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The commit that makes a task's turn claimable records its offer in the
// task's partition in the same atomic step: a commit that is refused
// records nothing, one without an offer records none, and the record stays
// until it is dropped (the offer made).
func TestOfferIsRecordedWithItsCommitAndOnlyThen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, outbox := range []bool{false, true} {
		s, rdb, _ := newStore(t, 4)
		turns := must(NewTurns(partsOf(s)))
		s.outbox = outbox
		const id = "task-offered"
		offers := s.k.Offers(s.k.Partition(id))
		turn := &Offer{Queue: "jobs", MessageID: "m1"}
		if _, err := s.Commit(ctx, Commit{TaskID: id, Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{}`)}, Deliver: []bool{true},
			PushConfigs: map[string][]byte{"c": []byte(`{}`)}, UpdatedAt: t0, Offer: turn}); err != nil {
			t.Fatal(err)
		}
		got, err := rdb.ZRangeWithScores(ctx, offers, 0, -1).Result()
		if err != nil || len(got) != 1 || int64(got[0].Score) != t0.UnixMilli() {
			t.Fatalf("outbox=%v: offers after the commit = %v, %v; want one, scored %d", outbox, got, err, t0.UnixMilli())
		}
		// A commit refused (the task exists: version 0 is stale) records nothing.
		if _, err := s.Commit(ctx, Commit{TaskID: id, Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{}`)}, UpdatedAt: t0.Add(time.Second),
			Offer: &Offer{Queue: "jobs", MessageID: "m2"}}); !errors.Is(err, ErrConflict) {
			t.Fatalf("outbox=%v: a stale commit: %v, want ErrConflict", outbox, err)
		}
		// A commit with no offer records none.
		if _, err := s.Commit(ctx, Commit{TaskID: id, Version: 1, Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{}`)},
			UpdatedAt: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		if n, _ := rdb.ZCard(ctx, offers).Result(); n != 1 {
			t.Fatalf("outbox=%v: %d offer records after a refused commit and one without an offer, want 1", outbox, n)
		}
		if due, err := turns.DueOffers(ctx, t0.Add(-time.Millisecond), 10); err != nil || len(due) != 0 {
			t.Fatalf("outbox=%v: offers due before the commit: %v, %v; want none", outbox, due, err)
		}
		due, err := turns.DueOffers(ctx, t0, 10)
		if want := (Offer{Queue: "jobs", TaskID: id, MessageID: "m1", Turn: 1, At: t0}); err != nil || len(due) != 1 || !due[0].At.Equal(want.At) ||
			due[0].Queue != want.Queue || due[0].TaskID != want.TaskID || due[0].MessageID != want.MessageID || due[0].Turn != want.Turn {
			t.Fatalf("outbox=%v: offers due at the commit: %v, %v; want %v", outbox, due, err, want)
		}
		if err := turns.DropOffer(ctx, due[0]); err != nil {
			t.Fatal(err)
		}
		if n, _ := rdb.ZCard(ctx, offers).Result(); n != 0 {
			t.Fatalf("outbox=%v: %d offer records after the drop, want none", outbox, n)
		}
	}
}

// An offer's turn number is the version its commit makes, whatever the
// caller set (a commit retried after a conflict numbers its turn anew),
// so a later turn of a task has a higher number even when its message
// reuses an earlier one's id. A record of an earlier build (no number)
// reads as turn 0 and is dropped as such.
func TestOfferIsNumberedByTheVersionItsCommitMakes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	turns := must(NewTurns(partsOf(s)))
	const id = "task-numbered"
	for v := range int64(3) {
		if _, err := s.Commit(ctx, Commit{TaskID: id, Version: v, Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{}`)},
			UpdatedAt: t0, Offer: &Offer{Queue: "jobs", MessageID: "m1", Turn: 99}}); err != nil {
			t.Fatal(err)
		}
	}
	due, err := turns.DueOffers(ctx, t0, 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("due offers = %v, %v; want 3, one per turn", due, err)
	}
	for i, o := range due {
		if o.Turn != int64(i+1) {
			t.Errorf("offer %d: turn %d, want %d (the version its commit made)", i, o.Turn, i+1)
		}
		if err := turns.DropOffer(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	offers := s.k.Offers(s.k.Partition(id))
	old := `{"v":1,"q":"jobs","t":"` + id + `","m":"m0"}`
	if err := rdb.ZAdd(ctx, offers, redis.Z{Score: float64(t0.UnixMilli()), Member: old}).Err(); err != nil {
		t.Fatal(err)
	}
	due, err = turns.DueOffers(ctx, t0, 10)
	if err != nil || len(due) != 1 || due[0].Turn != 0 || due[0].MessageID != "m0" {
		t.Fatalf("an earlier build's record reads as %v, %v; want turn 0 of m0", due, err)
	}
	if err := turns.DropOffer(ctx, due[0]); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.ZCard(ctx, offers).Result(); n != 0 {
		t.Fatalf("%d records left after the drops, want none", n)
	}
}
