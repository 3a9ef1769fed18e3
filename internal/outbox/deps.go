package outbox

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// Deps are what the outbox's parts work with: relay's Redis, its key
// layout and, for the parts that share round trips with other callers'
// commands (the task store's commits), its group-commit batcher. The app
// passes every part the same ones, the task store's.
type Deps struct {
	RDB  redis.UniversalClient
	Keys layout.Keys
	// Batch is required by the parts that say so; the others never use it.
	Batch *groupcommit.Batcher
}

// check reports the first dependency of part that is missing; batch: part
// needs Batch.
func (d Deps) check(part string, batch bool) error {
	switch {
	case d.RDB == nil:
		return fmt.Errorf("outbox: %s: RDB is required", part)
	case d.Keys.Partitions() == 0:
		return fmt.Errorf("outbox: %s: Keys is required (layout.New)", part)
	case batch && d.Batch == nil:
		return fmt.Errorf("outbox: %s: Batch is required", part)
	}
	return nil
}

// conn is the Redis and the key layout a part works with. What more than
// one part reads the same way are its methods: the outbox's entries
// (outboxEntryOf, waitingEntries), read by their owner and by a listing.
type conn struct {
	rdb redis.UniversalClient
	k   layout.Keys
}
