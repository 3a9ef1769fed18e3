package queue

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

// DeliveryStats returns the outcome counts of the last n minutes up to now,
// oldest first (finish.lua keeps them a day).
func (s *Store) DeliveryStats(ctx context.Context, now time.Time, n int) ([]MinuteStats, error) {
	last := now.UnixMilli() / 60000 * 60000
	out := make([]MinuteStats, n)
	pipe := s.rdb.Pipeline()
	cmds := make([][]*redis.MapStringStringCmd, n)
	for i := range n {
		m := last - int64(n-1-i)*60000
		out[i].Minute = time.UnixMilli(m).UTC()
		for p := range s.k.partitions {
			cmds[i] = append(cmds[i], pipe.HGetAll(ctx, s.k.tag(p)+"stats:"+strconv.FormatInt(m, 10)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("queue: delivery stats: %w", err)
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
