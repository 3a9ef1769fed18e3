package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/cadence"
	"github.com/a2arelay/relay/internal/taskstore"
)

// CompactStore is what the Compactor needs of Redis (taskstore.Compaction).
type CompactStore interface {
	CompactCandidates(ctx context.Context, n int, now time.Time) ([][]string, error)
	Compact(ctx context.Context, taskID string, now time.Time, fold taskstore.Fold) (bool, error)
}

// Leader elects the one instance that compacts (leader.Leases).
type Leader interface {
	Lead(ctx context.Context, role, holder string, ttl time.Duration) (bool, error)
}

// CompactorDeps are what a Compactor works with.
type CompactorDeps struct {
	Store  CompactStore
	Leader Leader
	// Holder names this instance in the leader's lease.
	Holder string
	Log    *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// CompactorConfig configures a Compactor. Zero values take the documented
// defaults.
type CompactorConfig struct {
	// Every is how often the leader compacts the listed streams (default
	// 1s); its lease outlives five looks.
	Every time.Duration
	// Batch bounds the streams compacted per partition per look (default
	// 64).
	Batch int
}

// Compactor keeps task event streams bounded: the commit lists a stream
// that has grown a quarter over its length, and the Compactor cuts it back
// (never past an entry a webhook still waits on), storing the task as it
// was before the first entry kept as the task's checkpoint. It is the one
// place that folds stored events into a stored task. One instance at a
// time compacts (a Redis lease, role "compaction").
type Compactor struct {
	d   CompactorDeps
	cfg CompactorConfig
}

// NewCompactor returns a Compactor, or an error naming what is missing or
// out of range.
func NewCompactor(d CompactorDeps, cfg CompactorConfig) (*Compactor, error) {
	switch {
	case d.Store == nil || d.Leader == nil:
		return nil, errors.New("ingest: compactor: Store and Leader are required")
	case d.Holder == "":
		return nil, errors.New("ingest: compactor: Holder is required")
	case cfg.Every < 0 || cfg.Batch < 0:
		return nil, fmt.Errorf("ingest: compactor: Every (%s) and Batch (%d) must not be negative", cfg.Every, cfg.Batch)
	}
	cfg.Every = cmp.Or(cfg.Every, time.Second)
	cfg.Batch = cmp.Or(cfg.Batch, 64)
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Compactor{d: d, cfg: cfg}, nil
}

// Run compacts listed streams every Every while this instance leads, until
// ctx ends.
func (c *Compactor) Run(ctx context.Context) {
	t := time.NewTimer(cadence.Until(c.d.Now(), c.cfg.Every)) // (on the process's grid, with the other loops)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(cadence.Until(c.d.Now(), c.cfg.Every))
			if lead, err := c.d.Leader.Lead(ctx, "compaction", c.d.Holder, 5*c.cfg.Every); err != nil || !lead {
				continue
			}
			c.RunOnce(ctx)
		}
	}
}

// RunOnce compacts up to Batch listed streams of every partition (listed
// in one round trip; a partition that could not be read is left to the
// next pass).
func (c *Compactor) RunOnce(ctx context.Context) {
	parts, err := c.d.Store.CompactCandidates(ctx, c.cfg.Batch, c.d.Now())
	if err != nil && ctx.Err() == nil {
		c.d.Log.WarnContext(ctx, "listing streams to compact", "err", err) // (the partitions read are compacted)
	}
	for _, ids := range parts {
		for _, id := range ids {
			if _, err := c.d.Store.Compact(ctx, id, c.d.Now(), foldStored); err != nil && ctx.Err() == nil {
				c.d.Log.WarnContext(ctx, "compacting a task's event stream", "task_id", id, "err", err)
			}
		}
	}
}

// foldStored rebuilds a stored task version as the commit path encodes it.
func foldStored(at taskstore.TaskAt) ([]byte, error) {
	if at.Snapshot != nil {
		return at.Snapshot, nil
	}
	t, err := a2a.FoldStored(at.Base, at.Events)
	if errors.Is(err, a2a.ErrNoOrigin) {
		return nil, fmt.Errorf("%w: %w", taskstore.ErrNoOrigin, err)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(t)
}
