package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// OfferStore is what the Reofferer needs of Redis (taskstore.Turns).
type OfferStore interface {
	DueOffers(ctx context.Context, before time.Time, perPartition int) ([]taskstore.Offer, error)
	DropOffer(ctx context.Context, o taskstore.Offer) error
}

// Offerer puts a task's turn, numbered turn, in a work queue
// (workqueue.Claims).
type Offerer interface {
	Offer(ctx context.Context, queue, taskID, messageID string, turn int64) error
}

// ReoffererDeps are what a Reofferer works with.
type ReoffererDeps struct {
	Store  OfferStore
	Queue  Offerer
	Leader Leader
	// Holder names this instance in the leader's lease.
	Holder string
	Log    *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// ReoffererConfig configures a Reofferer. Zero values take the documented
// defaults.
type ReoffererConfig struct {
	// After is how old a recorded offer must be to be made again (default
	// 10s): the commit's own relay makes it and drops its record within
	// milliseconds, unless it died in between (or is very slow, which
	// costs a duplicate offer, and duplicates are harmless).
	After time.Duration
	// Every is how often the leader looks for such records (default
	// After/4).
	Every time.Duration
	// Batch bounds the records read per partition per look (default 64).
	Batch int
}

// Reofferer makes the offers that commits recorded and no relay made: a
// relay that dies between the commit that makes a task's turn claimable
// and the turn's offer to its work queue (whose keys live in another hash
// slot, so no script writes both) leaves the offer's record in the task's
// partition (taskstore.Offer), and the Reofferer offers the turn and drops
// the record. One instance at a time looks (a Redis lease, role
// "reoffer"), every Every, reading at most Batch records per partition in
// one round trip. A turn offered twice is harmless: the work queue tells
// its duplicate by the turn's number, taken from the record, and drops it.
// An offer that fails (its queue's node is down, say) is skipped, its
// record kept for the next look; the rest of the look goes on, and the
// failures are logged in one line per look, at most once a minute
// (reofferLogEvery).
type Reofferer struct {
	d   ReoffererDeps
	cfg ReoffererConfig
}

// NewReofferer returns a Reofferer, or an error naming what is missing or
// out of range.
func NewReofferer(d ReoffererDeps, cfg ReoffererConfig) (*Reofferer, error) {
	switch {
	case d.Store == nil || d.Queue == nil || d.Leader == nil:
		return nil, errors.New("ingest: reofferer: Store, Queue and Leader are required")
	case d.Holder == "":
		return nil, errors.New("ingest: reofferer: Holder is required")
	case cfg.After < 0 || cfg.Every < 0 || cfg.Batch < 0:
		return nil, fmt.Errorf("ingest: reofferer: After (%s), Every (%s) and Batch (%d) must not be negative", cfg.After, cfg.Every, cfg.Batch)
	}
	cfg.After = cmp.Or(cfg.After, 10*time.Second)
	cfg.Every = cmp.Or(cfg.Every, max(cfg.After/4, 10*time.Millisecond))
	cfg.Batch = cmp.Or(cfg.Batch, 64)
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Reofferer{d: d, cfg: cfg}, nil
}

// reofferLogEvery spaces the warnings of looks whose offers fail.
const reofferLogEvery = time.Minute

// Run looks for records to offer every Every while this instance leads,
// until ctx ends.
func (r *Reofferer) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	var warned time.Time // when a failing look was last logged
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// The lease outlives three looks: a leader that dies is
			// replaced within about 3 Every.
			if lead, err := r.d.Leader.Lead(ctx, "reoffer", r.d.Holder, 3*r.cfg.Every); err != nil || !lead {
				continue
			}
			n, err := r.RunOnce(ctx)
			if now := r.d.Now(); err != nil && ctx.Err() == nil && (warned.IsZero() || now.Sub(warned) >= reofferLogEvery) {
				r.d.Log.WarnContext(ctx, "re-offering recorded offers; the failed ones are tried again on the next look", "err", err)
				warned = now
			}
			if n > 0 { // (one line per look, however many)
				r.d.Log.InfoContext(ctx, "offered task turns that their relay had not offered", "count", n)
			}
		}
	}
}

// RunOnce offers the turns of the records older than After (up to Batch
// per partition) and drops their records; it returns how many it offered.
// A record whose offer or drop fails is skipped (kept for the next look),
// and the error then counts the failures and names the first.
func (r *Reofferer) RunOnce(ctx context.Context) (int, error) {
	due, err := r.d.Store.DueOffers(ctx, r.d.Now().Add(-r.cfg.After), r.cfg.Batch)
	if err != nil {
		return 0, err
	}
	n, failed := 0, 0
	var first error
	for _, o := range due {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		err := r.d.Queue.Offer(ctx, o.Queue, o.TaskID, o.MessageID, o.Turn)
		if err == nil {
			n++
			err = r.d.Store.DropOffer(ctx, o)
		}
		if err != nil {
			failed++
			if first == nil {
				first = fmt.Errorf("task %s, queue %q: %w", o.TaskID, o.Queue, err)
			}
		}
	}
	if failed > 0 {
		return n, fmt.Errorf("ingest: %d of %d recorded offers failed; the first: %w", failed, len(due), first)
	}
	return n, nil
}
