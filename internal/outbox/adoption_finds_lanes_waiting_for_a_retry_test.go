package outbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// A lane whose only token waits in the retry set (its stream entry acked
// and trimmed) is adopted. (A token that moves between the retry set and
// the stream while the adoption reads them in steps is found too:
// adoption_reads_tokens_in_steps_test.go.)
func TestAdoptionFindsALaneWhoseTokenWaitsForItsRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lanes, _ := laneFixture(t, 2) // lanes path: two notifications in lane run/c1
	retryThenTrim(t, lanes)
	s := newFixture(lanes.rdb, storeConfig{Prefix: lanes.k.Prefix(), Partitions: 1, Outbox: true})
	adopted, err := s.AdoptLanes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	lane := s.k.Lane("run", "c1")
	if n := s.rdb.LLen(ctx, lane).Val(); n != 2 {
		t.Fatalf("lane holds %d", n)
	}
	if !slices.Contains(adopted, lane) || !s.rdb.SIsMember(ctx, s.k.Parked(0), lane).Val() {
		t.Fatalf("adopted %v: lane %s, holding 2 lanes-path notifications, is not parked", adopted, lane)
	}
}

// retryThenTrim fails the first token of lanes' partition 0 (lane run/c1)
// into the retry set, delivers another lane's token after it, and runs the
// housekeeping trim, which removes the acked token's stream entry unless
// the partition is being adopted.
func retryThenTrim(t *testing.T, lanes *fixture) {
	t.Helper()
	ctx := context.Background()
	tok := readOne(t, lanes, "w1")
	h, _, _ := lanes.Begin(ctx, tok, "w1", time.Minute)
	now := time.Now()
	if _, err := lanes.FinishToken(ctx, tok, h, Finish{Outcome: Retry, Attempt: []byte(`{}`), Now: now, First: now,
		Due: now.Add(time.Millisecond), Lease: time.Minute, Consumer: "w1"}); err != nil {
		t.Fatal(err)
	}
	// Another lane's token is delivered after it (a busy partition), so the
	// housekeeping trim removes the acked token.
	c := taskstore.Commit{TaskID: "other", Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		PushConfigs: map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}, Events: [][]byte{[]byte(`{}`)}, Deliver: []bool{true}}
	if _, err := lanes.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	tok2 := readOne(t, lanes, "w1")
	h2, _, _ := lanes.Begin(ctx, tok2, "w1", time.Minute)
	if _, err := lanes.FinishToken(ctx, tok2, h2, delivered(time.Now(), time.Minute, false)); err != nil {
		t.Fatal(err)
	}
	if err := lanes.TrimAcked(ctx, 0); err != nil { // the housekeeping trim
		t.Fatal(err)
	}
}
