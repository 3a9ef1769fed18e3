package outbox

import (
	"context"
	"testing"
	"time"
)

// A relay counts its outcomes by minutes of its own clock, and reads them
// back by it: a minute's counts are kept a keep after the minute by that
// clock, however far Redis's own clock is from it (a relay whose clock is
// behind Redis's still has a day of counts; one a day behind still has its
// counts at all).
func TestARelaysMinuteCountsAreKeptADayWhateverRedisClockSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 2)
	for _, behind := range []time.Duration{2 * time.Hour, 26 * time.Hour} {
		clock := func() time.Time { return time.Now().Add(-behind) }
		c, err := NewConsumer(*s.consumerDeps(), ConsumerConfig{Name: "relay", Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		minute := clock().Truncate(time.Minute)
		if err := c.AddStats(ctx, []Stat{{Partition: 1, Minute: minute.Add(time.Second), Outcome: "delivered", N: 2}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.DeliveryStats(ctx, minute.Add(30*time.Second), 1)
		if err != nil || len(got) != 1 || got[0].Delivered != 2 {
			t.Fatalf("a relay %v behind Redis reads its minute's counts as %+v, %v; want 2 delivered", behind, got, err)
		}
		if ttl := rdb.PTTL(ctx, s.k.Stats(1, minute.UnixMilli())).Val(); ttl < 24*time.Hour {
			t.Fatalf("a relay %v behind Redis has its minute's counts expire in %v, want over a day", behind, ttl)
		}
	}
}
