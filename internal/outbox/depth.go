package outbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/redis/go-redis/v9"
)

// Depth is the delivery backlog of one partition.
type Depth struct {
	// Waiting counts tokens no worker has read yet (the group's lag), and
	// the notifications in the partition's outbox after its owner's last
	// stored offset (the outbox path: waiting, or done in the last seconds);
	// InFlight those read and not finished; Retrying those waiting in the
	// retry set; Dead the dead letters kept.
	Waiting, InFlight, Retrying, Dead int64
	// OldestPending is the age of the oldest token read and not finished,
	// or of the oldest one not read yet (zero when there is none).
	OldestPending time.Duration
}

// Depths reads the backlog of every partition in one round trip (Redis 7's
// XINFO GROUPS lag; now is Redis's clock for ages, so skew does not matter).
func (s *Stats) Depths(ctx context.Context) ([]Depth, error) {
	pipe := s.rdb.Pipeline()
	n := s.k.Partitions()
	groups := make([]*redis.XInfoGroupsCmd, n)
	pending := make([]*redis.XPendingCmd, n)
	retries := make([]*redis.IntCmd, n)
	dead := make([]*redis.IntCmd, n)
	outbox := make([]*redis.IntCmd, n)
	offset := make([]*redis.StringCmd, n)
	for p := range n {
		outbox[p] = pipe.XLen(ctx, s.k.Outbox(p))
		offset[p] = pipe.Get(ctx, s.k.OutboxOffset(p))
		key := s.k.Deliveries(p)
		groups[p] = pipe.XInfoGroups(ctx, key)
		pending[p] = pipe.XPending(ctx, key, group)
		retries[p] = pipe.ZCard(ctx, s.k.Retries(p))
		dead[p] = pipe.XLen(ctx, s.k.Dead(p))
	}
	now := pipe.Time(ctx)
	_, _ = pipe.Exec(ctx) // a partition whose stream does not exist yet answers an error: zero
	if err := now.Err(); err != nil {
		return nil, fmt.Errorf("outbox: delivery depth: %w", err)
	}
	out := make([]Depth, n)
	oldest := make([]string, n)
	unread := s.rdb.Pipeline() // the first unread token, where nothing is in flight
	firsts := map[int]*redis.XMessageSliceCmd{}
	obFirsts := map[int]*redis.XMessageSliceCmd{}
	for p := range n {
		d := &out[p]
		last := ""
		for _, g := range groups[p].Val() {
			if g.Name == group {
				d.Waiting, last = max(g.Lag, 0), g.LastDeliveredID
			}
		}
		if pd := pending[p].Val(); pd != nil && pd.Count > 0 {
			d.InFlight, oldest[p] = pd.Count, pd.Lower
		} else if d.Waiting > 0 && last != "" {
			firsts[p] = unread.XRangeN(ctx, s.k.Deliveries(p), "("+last, "+", 1)
		}
		d.Retrying, d.Dead = retries[p].Val(), dead[p].Val()
		// The outbox keeps the entry at its offset (done) and those after it.
		after, start := outbox[p].Val(), "-"
		if off := offset[p].Val(); off != "" {
			after, start = max(after-1, 0), "("+off
		}
		if after > 0 {
			d.Waiting += after
			obFirsts[p] = unread.XRangeN(ctx, s.k.Outbox(p), start, "+", 1)
		}
	}
	if len(firsts)+len(obFirsts) > 0 {
		_, _ = unread.Exec(ctx)
		for p, c := range firsts {
			if m := c.Val(); len(m) > 0 {
				oldest[p] = m[0].ID
			}
		}
		for p, c := range obFirsts {
			if m := c.Val(); len(m) > 0 && (oldest[p] == "" || layout.IDBefore(m[0].ID, oldest[p])) {
				oldest[p] = m[0].ID
			}
		}
	}
	for p := range n {
		d := &out[p]
		if ms, _, ok := strings.Cut(oldest[p], "-"); ok {
			if t, err := strconv.ParseInt(ms, 10, 64); err == nil {
				d.OldestPending = max(now.Val().Sub(time.UnixMilli(t)), 0)
			}
		}
	}
	return out, nil
}
