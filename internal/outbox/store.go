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
package outbox

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// ErrNotFound: the delivery record (or the push config, or the event a
// notification refers to) does not exist.
var ErrNotFound = errors.New("not found")

//go:embed lua/begin.lua
var beginLua string

// Config configures a Store. Zero values take the documented defaults.
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

// Store is the delivery side of relay's Redis.
type Store struct {
	conn
	batch        *groupcommit.Batcher
	keep         time.Duration
	attemptsKept int

	outboxBatch outboxBatcher
}

// New returns a Store over rdb, with its keys named by k; its reports share
// round trips (with the task store's commits) through batch.
func New(rdb redis.UniversalClient, k layout.Keys, batch *groupcommit.Batcher, cfg Config) *Store {
	return &Store{
		conn:         conn{rdb: rdb, k: k},
		batch:        batch,
		keep:         cfg.retention(),
		attemptsKept: cfg.attemptsKept(),

		outboxBatch: outboxBatcher{pending: map[batchKey][]*outboxReq{}, running: map[batchKey]bool{}},
	}
}

// Partitions returns the number of partitions.
func (s *Store) Partitions() int { return s.k.Partitions() }
