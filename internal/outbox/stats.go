package outbox

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MinuteStats counts the delivery outcomes of one minute, across partitions.
type MinuteStats struct {
	Minute    time.Time `json:"minute"`
	Delivered int64     `json:"delivered"`
	Failed    int64     `json:"failed"`
	Dead      int64     `json:"dead"`
	Gone      int64     `json:"gone"`
}

// statsKeep is how long the per-minute counts are kept.
const statsKeep = 25 * time.Hour

// Stat is a count to add to one minute's outcome counts of a partition.
type Stat struct {
	Partition int
	Minute    time.Time
	// Outcome is "delivered", "failed", "dead" or "gone".
	Outcome string
	N       int64
}

// AddStats adds counts to the per-minute outcome counts, in one round trip.
// The delivery workers count outcomes in memory and add them about once a
// second, instead of one write per notification.
func (s *Store) AddStats(ctx context.Context, stats []Stat) error {
	if len(stats) == 0 {
		return nil
	}
	pipe := s.rdb.Pipeline()
	for _, st := range stats {
		key := s.k.Stats(st.Partition, st.Minute.UnixMilli()/60000*60000)
		pipe.HIncrBy(ctx, key, st.Outcome, st.N)
		pipe.PExpire(ctx, key, statsKeep)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("outbox: add delivery stats: %w", err)
	}
	return nil
}

// DeliveryStats returns the outcome counts of the last n minutes up to now,
// oldest first (kept a day).
func (s *Store) DeliveryStats(ctx context.Context, now time.Time, n int) ([]MinuteStats, error) {
	last := now.UnixMilli() / 60000 * 60000
	out := make([]MinuteStats, n)
	pipe := s.rdb.Pipeline()
	cmds := make([][]*redis.MapStringStringCmd, n)
	for i := range n {
		m := last - int64(n-1-i)*60000
		out[i].Minute = time.UnixMilli(m).UTC()
		for p := range s.k.Partitions() {
			cmds[i] = append(cmds[i], pipe.HGetAll(ctx, s.k.Stats(p, m)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("outbox: delivery stats: %w", err)
	}
	for i := range out {
		for _, c := range cmds[i] {
			v := c.Val()
			out[i].Delivered += atoi(v["delivered"])
			out[i].Failed += atoi(v["failed"])
			out[i].Dead += atoi(v["dead"])
			out[i].Gone += atoi(v["gone"])
		}
	}
	return out, nil
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
