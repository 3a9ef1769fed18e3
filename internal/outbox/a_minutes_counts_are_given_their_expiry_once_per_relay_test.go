package outbox

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A minute's outcome counts expire statsKeep after the minute starts (by
// the relay's clock): the first write of a relay to the minute sets that,
// and its later writes to it add counts without touching the expiry (one
// command a partition each). Another relay's first write sets the same
// expiry again.
func TestAMinutesCountsAreGivenTheirExpiryOncePerRelay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, prefix := newStore(t, 2)
	log := &commandLog{}
	s.rdb.AddHook(log)
	minute := time.Now().Truncate(time.Minute)
	key := s.k.Stats(1, minute.UnixMilli())
	add := func(s *fixture, n int64) {
		t.Helper()
		if err := s.AddStats(ctx, []Stat{{Partition: 1, Minute: minute.Add(time.Second), Outcome: "delivered", N: n}}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	expiresAt := func() time.Time {
		t.Helper()
		ms, err := rdb.Do(ctx, "PEXPIRETIME", key).Int64()
		log.take() // (the test's own read)
		if err != nil {
			t.Fatal(err)
		}
		return time.UnixMilli(ms)
	}
	// (set relative to the relay's clock, which Redis shares here: later
	// than the minute's start and the keep by the time the command took
	// to reach Redis, not by a minute)
	keptUntil := func(at time.Time) bool {
		d := at.Sub(minute.Add(statsKeep))
		return d > -time.Second && d < time.Minute
	}
	add(s, 2)
	if got := sent(log); !slices.Equal(got, []string{"hincrby", "pexpire"}) {
		t.Fatalf("a relay's first write of a minute sent %q, want hincrby and pexpire", got)
	}
	if at := expiresAt(); !keptUntil(at) {
		t.Fatalf("the minute's counts expire at %v, want %v (its start and the keep)", at, minute.Add(statsKeep))
	}
	add(s, 3)
	add(s, 4)
	if got := sent(log); !slices.Equal(got, []string{"hincrby", "hincrby"}) {
		t.Fatalf("a relay's later writes of the minute sent %q, want one hincrby each", got)
	}
	// Another relay, over a Redis where the expiry went (say an operator
	// persisted the key): its first write sets it again.
	rdb.Persist(ctx, key)
	other := newFixture(rdb, storeConfig{Prefix: prefix, Partitions: 2})
	add(other, 1)
	if at := expiresAt(); !keptUntil(at) {
		t.Fatalf("after another relay's first write the counts expire at %v, want %v", at, minute.Add(statsKeep))
	}
	got, err := s.DeliveryStats(ctx, minute.Add(30*time.Second), 1)
	if err != nil || len(got) != 1 || got[0].Delivered != 10 {
		t.Fatalf("stats %+v, %v; want 10 delivered", got, err)
	}
}

// sent is what log took, without the handshakes of new connections.
func sent(log *commandLog) []string {
	return slices.DeleteFunc(log.take(), func(n string) bool { return n == "hello" || n == "client" })
}
