package outbox

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A minute's counts that go after a relay set their expiry (an operator
// deletes them, Redis evicts them, a failover loses them) are made again
// by the relay's next write to the minute: that write notices (a count it
// added to before starts again from its own) and sets their expiry, so
// that they do not live for ever.
func TestAMinutesCountsRemovedMeanwhileGetTheirExpiryAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 2)
	now := time.Now()
	minute := now.Truncate(time.Minute)
	key := s.k.Stats(1, minute.UnixMilli())
	add := func(n int64) {
		t.Helper()
		if err := s.AddStats(ctx, []Stat{{Partition: 1, Minute: minute.Add(time.Second), Outcome: "delivered", N: n}}, now); err != nil {
			t.Fatal(err)
		}
	}
	add(2)
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	add(3)
	if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl <= 0 {
		t.Fatalf("the minute's counts made again expire in %v (%v); want a keep (-1: never)", ttl, err)
	}
	add(4)
	got, err := s.DeliveryStats(ctx, minute.Add(30*time.Second), 1)
	if err != nil || len(got) != 1 || got[0].Delivered != 7 {
		t.Fatalf("stats %+v, %v; want the 7 delivered since they went", got, err)
	}
}

// The counts are added when the expiry of the hash they made again cannot
// be set: AddStats does not fail then (the delivery workers would add them
// again), and the relay's next write to the minute sets the expiry.
func TestAMinutesCountsMadeAgainAreAddedOnceWhenTheirExpiryCannotBeSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 2)
	now := time.Now()
	minute := now.Truncate(time.Minute)
	key := s.k.Stats(1, minute.UnixMilli())
	add := func(n int64) error {
		return s.AddStats(ctx, []Stat{{Partition: 1, Minute: minute.Add(time.Second), Outcome: "delivered", N: n}}, now)
	}
	if err := add(2); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	fail := &failExpiries{}
	s.rdb.AddHook(fail)
	fail.on.Store(true)
	if err := add(3); err != nil {
		t.Fatalf("adding counts whose hash's expiry could not be set again: %v (they are added)", err)
	}
	fail.on.Store(false)
	if err := add(4); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl <= 0 {
		t.Fatalf("the minute's counts expire in %v (%v); want a keep", ttl, err)
	}
	got, err := s.DeliveryStats(ctx, minute.Add(30*time.Second), 1)
	if err != nil || len(got) != 1 || got[0].Delivered != 7 {
		t.Fatalf("stats %+v, %v; want the 7 delivered since they went", got, err)
	}
}

// failExpiries fails, while on, the pipelines that only set expiries.
type failExpiries struct{ on atomic.Bool }

func (f *failExpiries) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f *failExpiries) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (f *failExpiries) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !f.on.Load() || slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() != "pexpire" }) {
			return next(ctx, cmds)
		}
		err := errors.New("test: no expiry")
		for _, c := range cmds {
			c.SetErr(err)
		}
		return err
	}
}
