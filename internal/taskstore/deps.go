package taskstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// Deps are what the Store and the parts beside it (URLIndex, Turns,
// Compaction, HostValidations) work with: relay's Redis, its key layout
// and, for those that share round trips with other callers' commands (the
// Store's commits among them), its group-commit batcher. The app passes
// every part the Store's own.
type Deps struct {
	RDB  redis.UniversalClient
	Keys layout.Keys
	// Batch is required by the Store, URLIndex and Turns; the others never
	// use it.
	Batch *groupcommit.Batcher
}

// check reports the first dependency of part that is missing; batch: part
// needs Batch.
func (d Deps) check(part string, batch bool) error {
	switch {
	case d.RDB == nil:
		return fmt.Errorf("taskstore: %s: RDB is required", part)
	case d.Keys.Partitions() == 0:
		return fmt.Errorf("taskstore: %s: Keys is required (layout.New)", part)
	case batch && d.Batch == nil:
		return fmt.Errorf("taskstore: %s: Batch is required", part)
	}
	return nil
}
