package outbox

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// MinuteStats counts the delivery outcomes of one minute, across partitions.
type MinuteStats struct {
	Minute    time.Time `json:"minute"`
	Delivered int64     `json:"delivered"`
	Failed    int64     `json:"failed"`
	Dead      int64     `json:"dead"`
	Gone      int64     `json:"gone"`
}

// Stats counts delivery outcomes per minute (the workers add them, the
// operator API reads them) and reads the delivery backlog per partition
// (Depths, for the metrics). Its API: AddStats, DeliveryStats, Depths.
type Stats struct {
	rdb         redis.UniversalClient
	k           layout.Keys
	statsExpiry statsExpiry
}

// NewStats returns the outcome counts and backlog over d.RDB, named by
// d.Keys (d.Batch is not used), or an error naming what is missing.
func NewStats(d Deps) (*Stats, error) {
	if err := d.check("stats", false); err != nil {
		return nil, err
	}
	return &Stats{rdb: d.RDB, k: d.Keys}, nil
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
// second, instead of one write per notification. A minute's hash expires
// statsKeep after the minute starts, by the clock the minutes are counted
// and read by (the relay's, now: Redis's own may be off from it), set by
// the first write of each relay to it: a relay's later writes to the
// minute are one HINCRBY each. A later write whose count comes back as
// what it added, to an outcome this relay added to before, finds the hash
// made again (it went meanwhile: deleted, evicted, lost in a failover),
// without an expiry: it sets it, in a round trip of its own (whose failure
// leaves it to the relay's next write, the counts being added). Counts of
// a minute more than statsKeep before now are not added.
func (s *Stats) AddStats(ctx context.Context, stats []Stat, now time.Time) error {
	if len(stats) == 0 {
		return nil
	}
	type write struct {
		key   string
		keep  time.Duration
		n     int64
		again bool // to an outcome this relay added to before, without setting the expiry
		count *redis.IntCmd
	}
	pipe := s.rdb.Pipeline()
	var expiring []string
	writes := make([]write, 0, len(stats))
	for _, st := range stats {
		minute := st.Minute.UnixMilli() / 60000 * 60000
		keep := time.UnixMilli(minute).Add(statsKeep).Sub(now)
		if keep <= 0 {
			continue
		}
		key := s.k.Stats(st.Partition, minute)
		w := write{key: key, keep: keep, n: st.N, count: pipe.HIncrBy(ctx, key, st.Outcome, st.N)}
		first, again := s.statsExpiry.note(key, minute, st.Outcome)
		if first {
			pipe.PExpire(ctx, key, keep)
			expiring = append(expiring, key)
		}
		w.again = again && !first
		writes = append(writes, w)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		for _, key := range expiring {
			s.statsExpiry.forget(key) // the next write sets it
		}
		return fmt.Errorf("outbox: add delivery stats: %w", err)
	}
	var made []write
	for _, w := range writes {
		if w.again && w.n > 0 && w.count.Val() == w.n {
			made = append(made, w)
		}
	}
	if len(made) == 0 {
		return nil
	}
	pipe = s.rdb.Pipeline()
	for _, w := range made {
		pipe.PExpire(ctx, w.key, w.keep)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		// (not an error of AddStats: the counts are added, and must not
		// be added again)
		for _, w := range made {
			s.statsExpiry.forget(w.key) // the next write sets it
		}
	}
	return nil
}

// statsExpiry notes the minute hashes whose expiry this relay has set, and
// the outcomes it has added to in each.
type statsExpiry struct {
	mu  sync.Mutex
	set map[string]*statsNote // by key
}

type statsNote struct {
	minute   int64 // ms
	outcomes []string
}

// note tells whether key (of minute) has not had its expiry set by this
// relay (first), and whether this relay has added to outcome of it before
// (again); it notes that both now hold. Minutes more than a few old are
// forgotten (a late write to one sets about the same expiry again).
func (e *statsExpiry) note(key string, minute int64, outcome string) (first, again bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n, ok := e.set[key]; ok {
		if slices.Contains(n.outcomes, outcome) {
			return false, true
		}
		n.outcomes = append(n.outcomes, outcome)
		return false, false
	}
	if e.set == nil {
		e.set = map[string]*statsNote{}
	}
	for k, n := range e.set {
		if n.minute < minute-5*60000 {
			delete(e.set, k)
		}
	}
	e.set[key] = &statsNote{minute: minute, outcomes: []string{outcome}}
	return true, false
}

func (e *statsExpiry) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.set, key)
}

// DeliveryStats returns the outcome counts of the last n minutes up to now,
// oldest first (kept a day).
func (s *Stats) DeliveryStats(ctx context.Context, now time.Time, n int) ([]MinuteStats, error) {
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
