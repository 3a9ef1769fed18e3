// Package outbox is the Redis side of webhook delivery: what waits to be
// delivered and what became of it. It holds the partitions' outboxes (the
// notifications the task store's commit enqueued, each read by the relay
// that owns the partition), the lanes that keep a (task, webhook) pair in
// order while a notification waits for a retry, the retry schedule, the
// lane and outbox leases, dead letters, and the delivery records with their
// attempt logs. It decides lease timing: delivery consumes the outbox
// through a Consumer (consumer.go), which holds the lease durations and
// decides when leases are renewed, how long a claim is held and when a
// lease counts as lost. It knows nothing of A2A and POSTs nothing (delivery
// does), and never writes task state (taskstore does).
//
// Its parts, each a type built from the same Deps (and, where it reads
// one, the Config), each with an API that fits on a screen:
//
//	Lanes     the delivery streams' tokens, lanes and retries (delivery.go)
//	Owners    who owns each partition's outbox, adopted and parked lanes (outbox.go)
//	Outboxes  an owner's reads, loads and reports of its outbox (store.go, outbox.go)
//	Records   the delivery records, for the operator API (records.go)
//	Replay    a replay's reads of event streams and requeues (replay.go)
//	Stats     outcome counts per minute and the backlog (stats.go, depth.go)
//	Consumer  one relay's way into the first three and the housekeeping of
//	          the others, deciding every lease time (consumer.go)
package outbox

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
)

// ErrNotFound: the delivery record (or the push config, or the event a
// notification refers to) does not exist.
var ErrNotFound = errors.New("not found")

// Config configures the parts that take one. Zero values take the documented defaults.
type Config struct {
	// DeliveryRetention is how long delivery records and attempts are kept
	// (default 7 days): the task store's Config.DeliveryRetention.
	DeliveryRetention time.Duration
	// AttemptsKept caps the attempts logged per delivery (default 50): the
	// last AttemptsKept are kept.
	AttemptsKept int
	// Outbox sends new notifications through the partitions' outboxes
	// (outbox.go) instead of lanes: the task store's Config.Outbox.
	Outbox bool
}

// check reports the first setting of cfg out of range, for part.
func (c Config) check(part string) error {
	switch {
	case c.DeliveryRetention < 0:
		return fmt.Errorf("outbox: %s: Config.DeliveryRetention is negative (%s)", part, c.DeliveryRetention)
	case c.AttemptsKept < 0:
		return fmt.Errorf("outbox: %s: Config.AttemptsKept is negative (%d)", part, c.AttemptsKept)
	}
	return nil
}

// retention is DeliveryRetention, its default applied.
func (c Config) retention() time.Duration { return cmp.Or(c.DeliveryRetention, 7*24*time.Hour) }

// attemptsKept is AttemptsKept, its default applied.
func (c Config) attemptsKept() int { return cmp.Or(c.AttemptsKept, 50) }

// Outboxes are the partitions' outboxes as their owners work them: the
// notifications the task store's commit enqueued are read (ReadOutbox),
// loaded for delivery (LoadOutbox) and reported (FinishOutbox,
// FinishOutboxOps, whose reports share round trips). Who owns which
// outbox is the Owners' part, and the lease times the Consumer's. Its API:
// ReadOutbox, LoadOutbox, FinishOutbox, FinishOutboxOps.
type Outboxes struct {
	conn
	batch        *groupcommit.Batcher
	keep         time.Duration
	attemptsKept int

	outboxBatch outboxBatcher
}

// NewOutboxes returns the outboxes over d.RDB, named by d.Keys, whose reads
// and reports share round trips (with the task store's commits) through
// d.Batch (required); of cfg it reads DeliveryRetention and AttemptsKept
// (of the records a report writes). It returns an error naming what is
// missing or out of range.
func NewOutboxes(d Deps, cfg Config) (*Outboxes, error) {
	if err := d.check("outboxes", true); err != nil {
		return nil, err
	}
	if err := cfg.check("outboxes"); err != nil {
		return nil, err
	}
	return &Outboxes{
		conn:         conn{rdb: d.RDB, k: d.Keys},
		batch:        d.Batch,
		keep:         cfg.retention(),
		attemptsKept: cfg.attemptsKept(),

		outboxBatch: outboxBatcher{pending: map[batchKey][]*outboxReq{}, running: map[batchKey]bool{}},
	}, nil
}
