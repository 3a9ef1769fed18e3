package taskstore

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/compactplan.lua
	compactPlanLua string
	//go:embed lua/compact.lua
	compactLua string

	compactPlanScript = layout.ScriptOf[compactPlanArgs](compactPlanLua)
	compactScript     = layout.ScriptOf[compactArgs](compactLua)
)

// compactPlanArgs are lua/compactplan.lua's arguments, and compactArgs
// lua/compact.lua's, each read there by its lua name (layout.Named), where
// each is described.
type (
	compactPlanArgs struct {
		Task       string `lua:"task"`
		Lanes      string `lua:"lanes"`
		KeepLen    string `lua:"keepLen,number"`
		CompactLen int    `lua:"compactLen,number"`
		RetryAt    int64  `lua:"retryAt"`
	}
	compactArgs struct {
		Task       string `lua:"task"`
		Lanes      string `lua:"lanes"`
		Last       string `lua:"last"`
		Version    int64  `lua:"version"`
		First      string `lua:"first"`
		From       string `lua:"from"`
		Checkpoint []byte `lua:"checkpoint"`
		CompactLen int    `lua:"compactLen,number"`
		Records    string `lua:"records"`
		Part       int    `lua:"part"`
		Now        int64  `lua:"now"`
		Keep       int64  `lua:"keep,number"`
	}
)

// Compaction is the stream compactor's side of the task store: it lists
// the tasks whose event streams grew past their length (their partition's
// compaction zset, layout.Keys.Compact, which commits fill) and cuts those
// streams back, storing a checkpoint. It never writes a task's state or
// appends events (Store.Commit does), and never decides when to run
// (ingest.Compactor does).
type Compaction struct {
	rdb    redis.UniversalClient
	k      layout.Keys
	maxLen string
	// keep is the delivery retention: the notifications of the entries a
	// compaction cuts are listed in their task's delivery index while
	// their records live (compact.lua).
	keep time.Duration
}

// CompactionConfig configures a Compaction.
type CompactionConfig struct {
	// EventsMaxLen is the length of each task's event stream that is kept
	// (default 1000): the Store's Config.EventsMaxLen, which its commits
	// trim to.
	EventsMaxLen int
	// DeliveryRetention is how long delivery records are kept (default 7
	// days): the Store's Config.DeliveryRetention.
	DeliveryRetention time.Duration
}

// NewCompaction returns the compaction of the streams of d.RDB, named by
// d.Keys (d.Batch is not used), or an error naming what is missing or out
// of range.
func NewCompaction(d Deps, cfg CompactionConfig) (*Compaction, error) {
	if err := d.check("compaction", false); err != nil {
		return nil, err
	}
	if cfg.EventsMaxLen < 0 {
		return nil, fmt.Errorf("taskstore: compaction: EventsMaxLen (%d) must not be negative", cfg.EventsMaxLen)
	}
	if cfg.DeliveryRetention < 0 {
		return nil, fmt.Errorf("taskstore: compaction: DeliveryRetention (%s) must not be negative", cfg.DeliveryRetention)
	}
	return &Compaction{rdb: d.RDB, k: d.Keys, maxLen: strconv.Itoa(cmp.Or(cfg.EventsMaxLen, 1000)),
		keep: cmp.Or(cfg.DeliveryRetention, 7*24*time.Hour)}, nil
}

// compactAt is the length over which a task's event stream is compacted:
// a quarter (at least 16 entries) over the length kept, so that a stream
// is cut now and then, not at every commit.
func (s *Compaction) compactAt() int {
	n, _ := strconv.Atoi(s.maxLen)
	return n + max(16, n/4)
}

// ErrNoOrigin is what a Fold returns (wrapped) when the events neither
// start at the task's creation nor come with a base: a stream a previous
// relay cut. Compaction then trims it without a checkpoint.
var ErrNoOrigin = errors.New("no creation or base to fold from")

// How long a listed stream waits before it is looked at again: held back
// by a lagging webhook, or after a compaction that failed.
const (
	compactRetry     = 5 * time.Second
	compactFailRetry = time.Minute
)

// CompactCandidates returns, for every partition (indexed by partition),
// up to n tasks whose event streams are due for compaction at now, the
// earliest due first. The partitions are read in one round trip: a pass
// over them all costs one wake-up, not one per partition. A partition
// whose read failed (a cluster node down) has none, and the error names it;
// the others are returned all the same.
func (s *Compaction) CompactCandidates(ctx context.Context, n int, now time.Time) ([][]string, error) {
	by := &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(n)}
	cmds := make([]*redis.StringSliceCmd, s.k.Partitions())
	pipe := s.rdb.Pipeline()
	for p := range cmds {
		cmds[p] = pipe.ZRangeByScore(ctx, s.k.Compact(p), by)
	}
	_, _ = pipe.Exec(ctx) // (each command's error is its own)
	ids := make([][]string, len(cmds))
	var errs []error
	for p, c := range cmds {
		if err := c.Err(); err != nil {
			errs = append(errs, fmt.Errorf("taskstore: compaction candidates of partition %d: %w", p, err))
			continue
		}
		ids[p] = c.Val()
	}
	return ids, errors.Join(errs...)
}

// Fold rebuilds the task after a version from what TaskAt returned, encoded
// as stored (the caller knows the task model; the store does not).
type Fold func(TaskAt) ([]byte, error)

// Compact cuts a task's event stream back to the entries kept for stream
// resumes and those a lane still refers to, storing as the task's
// checkpoint the task as it was after the last entry cut, so that every
// entry left can still be rendered exactly. It returns whether it cut
// anything; a compaction that raced with another is planned again, and
// one that fails is put off for a minute (it cannot starve the others).
func (s *Compaction) Compact(ctx context.Context, taskID string, now time.Time, fold Fold) (bool, error) {
	cut, err := s.compact(ctx, taskID, now, fold)
	if err != nil {
		key := s.k.Compact(s.k.Partition(taskID))
		_ = s.rdb.ZAddXX(ctx, key, redis.Z{Score: float64(now.Add(compactFailRetry).UnixMilli()), Member: taskID}).Err()
	}
	return cut, err
}

func (s *Compaction) compact(ctx context.Context, taskID string, now time.Time, fold Fold) (bool, error) {
	tk := s.k.Task(taskID)
	p := s.k.Partition(taskID)
	at := s.compactAt()
	for range 3 {
		res, err := compactPlanScript.Run(ctx, s.rdb, []string{tk.Events, tk.Push, tk.Base, s.k.Compact(p), s.k.Outbox(p)},
			compactPlanScript.Args(&compactPlanArgs{
				Task:       taskID,
				Lanes:      s.k.LanePrefix(taskID),
				KeepLen:    s.maxLen,
				CompactLen: at,
				RetryAt:    now.Add(compactRetry).UnixMilli(),
			})...).Slice()
		if err != nil {
			return false, fmt.Errorf("taskstore: plan compaction: %w", err)
		}
		if n, _ := res[0].(int64); n == 0 || len(res) < 5 {
			return false, nil
		}
		last, _ := res[1].(string)
		ver, _ := res[2].(string)
		first, _ := res[3].(string)
		from, _ := res[4].(string)
		v, err := strconv.ParseInt(ver, 10, 64)
		if err != nil {
			return false, fmt.Errorf("taskstore: plan compaction: version %q: %w", ver, err)
		}
		state, err := history{rdb: s.rdb, k: s.k}.taskAt(ctx, taskID, last, v)
		if err != nil {
			return false, err
		}
		snap, err := fold(state)
		switch {
		case errors.Is(err, ErrNoOrigin):
			snap = nil // trimmed all the same: those versions could not be rebuilt before either
		case err != nil:
			return false, fmt.Errorf("taskstore: compaction of %s: %w", taskID, err)
		}
		done, err := compactScript.Run(ctx, s.rdb, []string{tk.Hash, tk.Events, tk.Push, tk.Base, s.k.Compact(p), s.k.Outbox(p), s.k.TaskDeliveries(taskID)},
			compactScript.Args(&compactArgs{
				Task:       taskID,
				Lanes:      s.k.LanePrefix(taskID),
				Last:       last,
				Version:    v,
				First:      first,
				From:       from,
				Checkpoint: snap,
				CompactLen: at,
				Records:    s.k.RecordPrefix(p),
				Part:       p,
				Now:        now.UnixMilli(),
				Keep:       s.keep.Milliseconds(),
			})...).Int()
		if err != nil {
			return false, fmt.Errorf("taskstore: compact: %w", err)
		}
		if done == 1 {
			return true, nil
		}
	}
	return false, nil
}
