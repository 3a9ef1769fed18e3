package outbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// Consumer is one relay's way into the outbox, and the one place that
// decides lease timing: it holds the consumer's name and its two leases,
// the lane lease (a worker's hold on a lane, and how long a token may stay
// unacknowledged before another consumer takes it over) and the outbox
// lease (a relay's ownership of a partition's outbox), and it decides how
// often they are renewed, when a token read is still fresh, when a lane
// run re-claims its token, and when too little of a lane lease is left to
// start an attempt. The delivery workers work through it alone and never
// compute a lease time themselves.
//
// Its API, by use:
//
//	Name, Partitions, Timing
//	lanes:        ReadTokens, Reclaim, Begin, CanAttempt, FinishToken
//	outboxes:     Relays, Own, KeepOwning, Leave, ReadOutbox, LoadOutbox,
//	              FinishOutbox, AdoptLanes, ParkedLanes, ForgetAdoptions
//	housekeeping: EnsureGroups, AddStats, MoveDue, TrimAcked,
//	              PruneConsumers, ExpireRecords
type Consumer struct {
	outboxes *Outboxes
	lanes    *Lanes
	owners   *Owners
	stats    *Stats
	records  *Records
	name     string
	t        Timing
	// attempt is ConsumerConfig.Attempt.
	attempt time.Duration
	now     func() time.Time
}

// ConsumerDeps are the parts of the outbox a Consumer drives (all
// required).
type ConsumerDeps struct {
	// Outboxes are read, loaded and reported by their owners.
	Outboxes *Outboxes
	// Lanes hand out the tokens of lanes, begun and finished here.
	Lanes *Lanes
	// Owners keep who owns each partition's outbox.
	Owners *Owners
	// Stats takes the outcome counts the workers add.
	Stats *Stats
	// Records has its indexes and dead letters expired (ExpireRecords).
	Records *Records
}

// ConsumerConfig configures a Consumer. Zero values take the documented
// defaults.
type ConsumerConfig struct {
	// Name is the consumer in the delivery streams' group and the holder
	// of its leases: one per relay process (required).
	Name string
	// Attempt is the longest one delivery attempt takes: the delivery
	// timeout (default 10s).
	Attempt time.Duration
	// LaneLease is how long a lane lease lasts unrenewed, and how long a
	// token may stay unacknowledged before another consumer takes it over
	// (default Attempt + 5s).
	LaneLease time.Duration
	// OwnLease is how long an outbox lease lasts unrenewed (default 10s).
	OwnLease time.Duration
	// Now is the clock the lease decisions read (default time.Now).
	Now func() time.Time
}

// Timing is a consumer's leases and the cadence of the loops that keep
// them, as it decides them.
type Timing struct {
	// Attempt, LaneLease and OwnLease are ConsumerConfig's (defaults
	// applied): the leases are sized for an attempt of at most Attempt.
	Attempt, LaneLease, OwnLease time.Duration
	// Reclaim is how often tokens left pending are looked for: LaneLease/2.
	Reclaim time.Duration
	// Look is how often a relay looks for outboxes without an owner (and
	// counts the relays sharing them): OwnLease/3.
	Look time.Duration
	// Renew is how often an owner renews its outbox lease and stores its
	// offset: OwnLease/5.
	Renew time.Duration
}

// departed is how long a consumer with nothing pending stays idle before
// PruneConsumers takes it as gone (its process stopped).
const departed = time.Hour

// NewConsumer returns the consumer cfg.Name of d's parts, or an error
// naming the part or setting that is missing or out of range.
func NewConsumer(d ConsumerDeps, cfg ConsumerConfig) (*Consumer, error) {
	switch {
	case d.Outboxes == nil:
		return nil, errors.New("outbox: ConsumerDeps.Outboxes is required")
	case d.Lanes == nil:
		return nil, errors.New("outbox: ConsumerDeps.Lanes is required")
	case d.Owners == nil:
		return nil, errors.New("outbox: ConsumerDeps.Owners is required")
	case d.Stats == nil:
		return nil, errors.New("outbox: ConsumerDeps.Stats is required")
	case d.Records == nil:
		return nil, errors.New("outbox: ConsumerDeps.Records is required")
	case cfg.Name == "":
		return nil, errors.New("outbox: ConsumerConfig.Name is required")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Attempt", cfg.Attempt}, {"LaneLease", cfg.LaneLease}, {"OwnLease", cfg.OwnLease}} {
		if d.v < 0 {
			return nil, fmt.Errorf("outbox: ConsumerConfig.%s is negative (%s)", d.name, d.v)
		}
	}
	attempt := cmp.Or(cfg.Attempt, 10*time.Second)
	lane := cmp.Or(cfg.LaneLease, attempt+5*time.Second)
	own := cmp.Or(cfg.OwnLease, 10*time.Second)
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Consumer{outboxes: d.Outboxes, lanes: d.Lanes, owners: d.Owners, stats: d.Stats, records: d.Records,
		name: cfg.Name, attempt: attempt, now: now,
		t: Timing{Attempt: attempt, LaneLease: lane, OwnLease: own, Reclaim: lane / 2, Look: own / 3, Renew: own / 5}}, nil
}

// Name is the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Partitions returns the number of partitions.
func (c *Consumer) Partitions() int { return c.lanes.k.Partitions() }

// Timing returns the consumer's leases and cadences.
func (c *Consumer) Timing() Timing { return c.t }

// ReadTokens reads up to count new tokens of partition p, blocking up to
// block when there are none; each carries the time of the read (Token.Read).
func (c *Consumer) ReadTokens(ctx context.Context, p, count int, block time.Duration) ([]Token, error) {
	read := c.now() // no later than Redis handing the tokens out
	ts, err := c.lanes.ReadTokens(ctx, p, c.name, count, block)
	for i := range ts {
		ts[i].Read = read
	}
	return ts, err
}

// Reclaim takes over up to count tokens of partition p left pending longer
// than the lane lease (their worker died, or froze).
func (c *Consumer) Reclaim(ctx context.Context, p, count int) ([]Token, error) {
	return c.lanes.Reclaim(ctx, p, c.name, c.t.LaneLease, count)
}

// Begin starts work on t under a lane lease (Lanes.Begin). A token this
// consumer read less than half a lane lease ago is begun as fresh: its
// idle time runs on from the read, which counts as its last claim.
func (c *Consumer) Begin(ctx context.Context, t Token) (Head, int, error) {
	began := c.now() // the lane lease runs from here
	t.Fresh = c.fresh(t, began)
	h, status, err := c.lanes.Begin(ctx, t, c.name, c.t.LaneLease)
	h.held, h.claimed = began, began
	if t.Fresh {
		h.claimed = t.Read
	}
	return h, status, err
}

// fresh tells whether t, begun at began, was read by this consumer itself
// less than half a lane lease before.
func (c *Consumer) fresh(t Token, began time.Time) bool {
	return !t.Reclaimed && !t.Read.IsZero() && began.Sub(t.Read) < c.t.LaneLease/2
}

// CanAttempt tells whether an attempt at h, started now, ends within the
// lane lease h is held under: one that could not (the process paused
// since Begin) must not start, as another worker may hold the lane by now.
// A head held under no lane lease (an outbox owner's) always can.
func (c *Consumer) CanAttempt(h Head) bool {
	if h.held.IsZero() {
		return true
	}
	return c.now().Sub(h.held) <= c.t.LaneLease-min(c.attempt, c.t.LaneLease/2)
}

// FinishToken finishes t's head h (Lanes.FinishToken). On a lane run step
// (f.Run) it renews the lane lease, and restarts the token's idle time
// once its last claim is a quarter of the lane lease ago, decided here: the
// gap between claims stays under a quarter lease plus one attempt, below
// the lease. The next head it hands back is held from now.
func (c *Consumer) FinishToken(ctx context.Context, t Token, h Head, f Finish) (Finished, error) {
	renewed := c.now() // the script renews the lease after this
	f.Lease, f.Consumer = c.t.LaneLease, c.name
	f.Claim = c.claim(f.Run, h.claimed, renewed)
	done, err := c.lanes.FinishToken(ctx, t, h, f)
	if done.Run {
		done.Next.held, done.Next.claimed = renewed, h.claimed
		if f.Claim {
			done.Next.claimed = renewed
		}
	}
	return done, err
}

// claim tells whether a run step at now restarts the token's idle time,
// last restarted at claimed.
func (c *Consumer) claim(run bool, claimed, now time.Time) bool {
	return run && now.Sub(claimed) >= c.t.LaneLease/4
}

// Relays records that this relay takes part in owning outboxes, and
// returns how many relays did within an outbox lease (this one included).
func (c *Consumer) Relays(ctx context.Context) (int, error) {
	return c.owners.OutboxRelays(ctx, c.name, c.t.OwnLease)
}

// Own takes partition p's outbox for an outbox lease, when no other
// relay holds it (Owners.Own).
func (c *Consumer) Own(ctx context.Context, p int) (Ownership, bool, error) {
	return c.owners.Own(ctx, p, c.name, c.t.OwnLease)
}

// KeepOwning renews the lease of partition p's outbox, or gives it up with
// release, storing offset unless "" (Owners.KeepOwning); false: the lease is
// lost, another relay holds it.
func (c *Consumer) KeepOwning(ctx context.Context, p int, offset string, release bool) (bool, error) {
	return c.owners.KeepOwning(ctx, p, c.name, c.t.OwnLease, offset, release)
}

// Leave takes this relay off the outboxes' owners (it stops).
func (c *Consumer) Leave(ctx context.Context) { c.owners.LeaveOutbox(ctx, c.name) }

// FinishOutbox applies ops of partition p's owner, in order, and returns
// their results (Outboxes.FinishOutboxOps).
func (c *Consumer) FinishOutbox(ctx context.Context, p int, ops ...OutboxOp) ([]int, error) {
	return c.outboxes.FinishOutboxOps(ctx, p, c.name, ops)
}

// PruneConsumers removes partition p's consumers that have had nothing
// pending for an hour (Lanes.PruneConsumers).
func (c *Consumer) PruneConsumers(ctx context.Context, p int) (int, error) {
	return c.lanes.PruneConsumers(ctx, p, departed)
}

// The rest are the parts', unchanged: they involve no lease.

// ReadOutbox is Outboxes.ReadOutbox.
func (c *Consumer) ReadOutbox(ctx context.Context, p int, after string, count int, block time.Duration) ([]OutboxEntry, error) {
	return c.outboxes.ReadOutbox(ctx, p, after, count, block)
}

// LoadOutbox is Outboxes.LoadOutbox.
func (c *Consumer) LoadOutbox(ctx context.Context, p int, es []OutboxEntry, o LoadOptions) ([]Loaded, time.Time, error) {
	return c.outboxes.LoadOutbox(ctx, p, es, o)
}

// AdoptLanes is Owners.AdoptLanes.
func (c *Consumer) AdoptLanes(ctx context.Context, p int) ([]string, error) {
	return c.owners.AdoptLanes(ctx, p)
}

// ParkedLanes is Owners.ParkedLanes.
func (c *Consumer) ParkedLanes(ctx context.Context, p int) ([]string, error) {
	return c.owners.ParkedLanes(ctx, p)
}

// ForgetAdoptions is Owners.ForgetAdoptions.
func (c *Consumer) ForgetAdoptions(ctx context.Context) error { return c.owners.ForgetAdoptions(ctx) }

// EnsureGroups is Lanes.EnsureGroups.
func (c *Consumer) EnsureGroups(ctx context.Context) error { return c.lanes.EnsureGroups(ctx) }

// AddStats is Stats.AddStats, by the consumer's clock.
func (c *Consumer) AddStats(ctx context.Context, stats []Stat) error {
	return c.stats.AddStats(ctx, stats, c.now())
}

// MoveDue is Lanes.MoveDue.
func (c *Consumer) MoveDue(ctx context.Context, p int, now time.Time, limit int) (int, time.Time, error) {
	return c.lanes.MoveDue(ctx, p, now, limit)
}

// TrimAcked is Lanes.TrimAcked.
func (c *Consumer) TrimAcked(ctx context.Context, p int) error { return c.lanes.TrimAcked(ctx, p) }

// ExpireRecords is Records.ExpireRecords.
func (c *Consumer) ExpireRecords(ctx context.Context, p int, now time.Time) error {
	return c.records.ExpireRecords(ctx, p, now)
}
