package outbox

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// Counts added per partition are summed per minute across partitions.
func TestAddStatsSumsAcrossPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	now := time.Now().Truncate(time.Minute).Add(30 * time.Second) // (a minute's counts expire a keep after it)
	err := s.AddStats(ctx, []Stat{{Partition: 0, Minute: now, Outcome: "delivered", N: 3},
		{Partition: 3, Minute: now.Add(10 * time.Second), Outcome: "delivered", N: 2},
		{Partition: 1, Minute: now.Add(-time.Minute), Outcome: "failed", N: 1}}, now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.DeliveryStats(ctx, now, 2)
	if err != nil || len(got) != 2 || got[0].Failed != 1 || got[0].Delivered != 0 || got[1].Delivered != 5 {
		t.Fatalf("stats %+v, %v", got, err)
	}
	if ttl := rdb.PTTL(ctx, s.k.Tag(0)+"stats:"+strconv.FormatInt(now.UnixMilli()/60000*60000, 10)).Val(); ttl <= 0 || ttl > statsKeep {
		t.Fatalf("a minute's counts expire in %s, want within %s", ttl, statsKeep)
	}
}
