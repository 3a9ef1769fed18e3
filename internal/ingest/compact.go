package ingest

import (
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

// CompactStore is what the Compactor needs of Redis (taskstore.Store).
type CompactStore interface {
	CompactCandidates(ctx context.Context, n int, now time.Time) ([][]string, error)
	Compact(ctx context.Context, taskID string, now time.Time, fold taskstore.Fold) (bool, error)
}

// Leader elects the one instance that compacts (leader.Leases).
type Leader interface {
	Lead(ctx context.Context, role, holder string, ttl time.Duration) (bool, error)
}

// Compactor keeps task event streams bounded: the commit lists a stream
// that has grown a quarter over its length, and the Compactor cuts it back
// (never past an entry a webhook still waits on), storing the task as it
// was before the first entry kept as the task's checkpoint. It is the one
// place that folds stored events into a stored task. One instance at a
// time compacts (a Redis lease).
type Compactor struct {
	store  CompactStore
	leader Leader
	holder string
	log    *slog.Logger
	now    func() time.Time
}

// NewCompactor returns a Compactor; holder names this instance in the
// leader's lease.
func NewCompactor(store CompactStore, leader Leader, holder string, log *slog.Logger) *Compactor {
	return &Compactor{store: store, leader: leader, holder: holder, log: log, now: time.Now}
}

// Run compacts listed streams every second until ctx ends.
func (c *Compactor) Run(ctx context.Context) {
	t := time.NewTimer(cadence.Until(c.now(), time.Second)) // (on the process's grid, with the other loops)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(cadence.Until(c.now(), time.Second))
			if lead, err := c.leader.Lead(ctx, "compaction", c.holder, 5*time.Second); err != nil || !lead {
				continue
			}
			c.RunOnce(ctx)
		}
	}
}

// RunOnce compacts up to 64 listed streams of every partition (listed in
// one round trip; a partition that could not be read is left to the next
// pass).
func (c *Compactor) RunOnce(ctx context.Context) {
	parts, err := c.store.CompactCandidates(ctx, 64, c.now())
	if err != nil && ctx.Err() == nil {
		c.log.WarnContext(ctx, "listing streams to compact", "err", err) // (the partitions read are compacted)
	}
	for _, ids := range parts {
		for _, id := range ids {
			if _, err := c.store.Compact(ctx, id, c.now(), foldStored); err != nil && ctx.Err() == nil {
				c.log.WarnContext(ctx, "compacting a task's event stream", "task_id", id, "err", err)
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
