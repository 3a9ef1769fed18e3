package taskstore

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Usage: what a client (an owner) has stored, as its storage budget counts
// it (internal/quota holds clients to their budgets).
//
// Bytes are counted when they are written, in counters kept per partition,
// owner and time bucket (layout.Keys.Usage). The commit script says what a
// commit adds to the counter of the task's partition (and keeps the task's
// own count in its hash, below); this relay sums those adds per counter
// (usage_tally.go) and sends the sums every usageFlushEvery, one INCRBY
// (and PEXPIRE NX) per counter, not one per commit. A counter expires a
// usage window (and a bucket) after it is made, so it forgets what was
// written long ago, as Redis does; and since the first commit of a task in
// a new bucket counts the task's bytes again in that bucket, a task's
// bytes stay counted for at least a window after its last commit.
//
// A finished task expires a task retention after its last commit and a
// delivery record a delivery retention after it is made, so with a window
// no shorter than either, every byte of a finished task or a record that
// Redis still holds is counted. The count errs high, never low, for them
// (but for what a relay that dies loses, below): a task that commits in
// several buckets is counted in each, events cut from a stream stay
// counted, and a snapshot that shrinks is not subtracted. What is counted is the data (snapshot growth, events, push
// configs, NotificationBytes per notification); Redis's own overhead per
// key and entry comes on top.
//
// The tally's cost: the counters in Redis lag the writes by up to
// usageFlushEvery (longer while Redis is unreachable: a flush that fails
// keeps its sums for the next, up to usageTallyMax counters). Usage adds
// what this relay holds to what Redis holds, so a relay sees its own
// writes at once and other relays' within an interval: a client may pass
// a budget by about one interval of its writes through other relays. A
// relay that stops sends what it holds (Close); one that dies (killed, or
// losing Redis for good) loses it, at most its last interval's writes:
// the count errs low there, until each task concerned commits in a new
// bucket (which counts it whole again). A flush
// whose reply is lost and that go-redis sends again counts its sums twice
// (errs high). Relays that count in their commit script (builds before the
// tally) add to the same counters, with the same rule: both kinds count
// side by side.
//
// The one gap: a task that is neither finished nor updated for a whole
// window drops out of the count while Redis keeps it (relay keeps open
// tasks until they end). Each client's open tasks are bounded by its tasks
// budget, counted exactly (Tasks, PruneIndex), not by time.

// usageLua is the one Lua owner of usage counting (countUsage), put before
// each script that stores bytes: lua/commit.lua and lua/pushset.lua.
//
//go:embed lua/usage.lua
var usageLua string

// usageBuckets is how many buckets a usage window spans.
const usageBuckets = 4

// usageFlushEvery is how often a relay sends its usage tally to Redis:
// how long the counters may lag its writes. Under load each flush replaces
// thousands of INCRBYs (one per commit) by one per counter written in the
// interval (partitions × owners × buckets).
const usageFlushEvery = time.Second

// usageTallyMax bounds the counters whose sums a failed flush keeps for
// the next: past it, they are dropped (errs low). A flush that succeeds
// empties the tally.
const usageTallyMax = 1 << 16

// NotificationBytes is what the usage counts for each notification a commit
// makes: its delivery record with a few attempts, its outbox or lane entry
// and its index entries.
const NotificationBytes = 512

// usageClock maps times to usage buckets.
type usageClock struct {
	window, length time.Duration
}

func newUsageClock(window time.Duration) usageClock {
	return usageClock{window: window, length: max(window/usageBuckets, time.Millisecond)}
}

// bucket is the usage bucket of t.
func (u usageClock) bucket(t time.Time) int64 { return t.UnixMilli() / u.length.Milliseconds() }

// ttl is how long a usage counter lives once made: made at t, within
// bucket b, it lives past every write of b plus a window.
func (u usageClock) ttl() time.Duration { return u.window + u.length }

// live are the buckets whose counters may still exist at now, oldest
// first: a counter of bucket b is gone by the start of bucket
// b+usageBuckets+2.
func (u usageClock) live(now time.Time) []int64 {
	cur := u.bucket(now)
	out := make([]int64, 0, usageBuckets+2)
	for b := cur - usageBuckets - 1; b <= cur; b++ {
		out = append(out, b)
	}
	return out
}

// commitUsage is what c counts in its owner's usage, but for its
// notifications (counted by the script): what it stores (dataUsage) less
// what it draws from the task's reserve, plus what it reserves, less what
// it releases (Reservations).
func commitUsage(c Commit) int64 {
	n := dataUsage(c)
	drawn := min(c.PrevReserve, n)
	n += c.Reserve - drawn
	if c.Release {
		n -= c.PrevReserve - drawn
	}
	return n
}

// Reservations: an agent's output is counted when a client's request for
// it is committed, not only as the agent writes it, so that a budget
// refuses the requests whose answers would pass it. The commit that
// starts a task's turn counts the agent's estimate of its output
// (Commit.Reserve) in the owner's usage, and the task hash keeps it
// (fieldReserve: Record.Reserve). Each later commit draws what it stores
// from the reserve first and counts only the rest (the caller passes the
// reserve of the version it computed from, PrevReserve, as it passes
// PrevSnapshotLen: the version check makes it the stored one). The commit
// that ends the turn (Release) gives back what is left: the counter goes
// down by it. Notifications are counted as they are made, so a reserve
// that covers them counts them twice until it is released.

// fieldReserve is the task-hash field of the task's reserve.
const fieldReserve = "rs"

// ReserveAfter is the task's reserve once c is committed.
func (c Commit) ReserveAfter() int64 {
	left := c.PrevReserve - min(c.PrevReserve, dataUsage(c))
	if c.Release {
		left = 0
	}
	return left + c.Reserve
}

// reserveFields are c's task-hash fields with the reserve when it changes.
func reserveFields(c Commit) map[string]string {
	after := c.ReserveAfter()
	if after == c.PrevReserve {
		return c.Fields
	}
	f := maps.Clone(c.Fields)
	if f == nil {
		f = map[string]string{}
	}
	f[fieldReserve] = strconv.FormatInt(after, 10)
	return f
}

// dataUsage is what c stores, as the usage counts it: the growth of the
// snapshot, the events, push configs and fields.
func dataUsage(c Commit) int64 {
	n := int64(max(0, len(c.Snapshot)-c.PrevSnapshotLen))
	for _, e := range c.Events {
		n += int64(len(e) + len(c.TraceParent)) // (each event's entry keeps the commit's traceparent)
	}
	for id, v := range c.PushConfigs {
		n += int64(len(id) + len(v))
	}
	for f, v := range c.Fields {
		n += int64(len(f) + len(v))
	}
	return n
}

// Usage is what an owner has stored: bytes as the usage counters count
// them, and tasks as its index lists them (which may still list tasks that
// expired since; PruneIndex drops them).
type Usage struct {
	Bytes, Tasks int64
}

// Usage reads owner's usage at now, in one round trip: the counters of
// every live bucket (one MGET per partition: they share its slot), plus
// what this relay's tally holds for them (read first: a flush that lands
// meanwhile is counted twice, never missed), and the size of every
// partition's index.
func (s *Store) Usage(ctx context.Context, owner string, now time.Time) (Usage, error) {
	pipe := s.rdb.Pipeline()
	buckets := s.usage.live(now)
	counters := make([]*redis.SliceCmd, s.k.Partitions())
	sizes := make([]*redis.IntCmd, s.k.Partitions())
	keys := make([]string, len(buckets))
	for p := range s.k.Partitions() {
		for i, b := range buckets {
			keys[i] = s.k.Usage(p, owner, b)
		}
		counters[p] = pipe.MGet(ctx, keys...)
		sizes[p] = pipe.ZCard(ctx, s.k.Index(p, owner))
	}
	// What the tally holds is read before Redis is: a flush that lands in
	// between is then counted twice (errs high), never missed.
	held := s.tally.held(owner, s.k.Partitions(), buckets)
	if _, err := pipe.Exec(ctx); err != nil {
		return Usage{}, fmt.Errorf("taskstore: read usage: %w", err)
	}
	u := Usage{Bytes: held}
	for _, c := range counters {
		for _, v := range c.Val() {
			if v == nil {
				continue // no counter in this bucket
			}
			n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
			if err != nil {
				return Usage{}, fmt.Errorf("taskstore: read usage: counter %q: %w", v, err)
			}
			u.Bytes += n
		}
	}
	for _, c := range sizes {
		u.Tasks += c.Val()
	}
	return u, nil
}

// pruneBatch bounds the index entries PruneIndex looks at per partition.
const pruneBatch = 256

// PruneIndex drops from owner's index the tasks that expired: it looks at
// up to pruneBatch of the entries of each partition listed before idle
// (their latest status change, or creation; only those can have expired: a
// finished task expires a task retention after its last commit, which
// changed its status) and drops those whose task is gone. It
// returns how many it dropped.
func (s *Store) PruneIndex(ctx context.Context, owner string, idle time.Time) (int, error) {
	pipe := s.rdb.Pipeline()
	olds := make([]*redis.StringSliceCmd, s.k.Partitions())
	for p := range olds {
		olds[p] = pipe.ZRangeByScore(ctx, s.k.Index(p, owner), &redis.ZRangeBy{
			Min: "-inf", Max: "(" + strconv.FormatInt(idle.UnixMilli(), 10), Count: pruneBatch})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("taskstore: prune index: %w", err)
	}
	var ids []string
	for _, c := range olds {
		ids = append(ids, c.Val()...)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	pipe = s.rdb.Pipeline()
	exists := make([]*redis.IntCmd, len(ids))
	for i, id := range ids {
		exists[i] = pipe.Exists(ctx, s.k.Task(id).Hash)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("taskstore: prune index: %w", err)
	}
	pipe = s.rdb.Pipeline()
	gone := 0
	for i, id := range ids {
		if exists[i].Val() == 0 {
			pipe.ZRem(ctx, s.k.Index(s.k.Partition(id), owner), id)
			gone++
		}
	}
	if gone == 0 {
		return 0, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("taskstore: prune index: %w", err)
	}
	return gone, nil
}
