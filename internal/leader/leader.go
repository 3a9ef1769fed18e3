// Package leader elects, per role, the one relay instance that does a job
// one instance is enough for (housekeeping, compaction), with a lease in
// Redis. It knows nothing of the jobs.
package leader

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// leadScript keeps or takes a named lease: the holder renews its own, and
// anyone takes one that expired. KEYS[1] the lease; ARGV, by name
// (layout.Named): holder (the lease value) and leaseMs.
var leadScript = layout.BareScriptOf[leadArgs](`if redis.call('GET', KEYS[1]) == holder then
  redis.call('PEXPIRE', KEYS[1], leaseMs)
  return 1
end
if redis.call('SET', KEYS[1], holder, 'NX', 'PX', leaseMs) then
  return 1
end
return 0`)

type leadArgs struct {
	Holder  string `lua:"holder"`
	LeaseMs int64  `lua:"leaseMs"`
}

// Leases are the leader leases of every role.
type Leases struct {
	rdb redis.UniversalClient
	k   layout.Keys
}

// New returns the leases kept in rdb.
func New(rdb redis.UniversalClient, k layout.Keys) *Leases { return &Leases{rdb: rdb, k: k} }

// Lead reports whether holder leads role now: it renews holder's lease for
// ttl, or takes the lease when nobody holds it. The instances that do not
// lead skip the job; when the leader dies its lease runs out and another
// takes over.
func (l *Leases) Lead(ctx context.Context, role, holder string, ttl time.Duration) (bool, error) {
	n, err := leadScript.Run(ctx, l.rdb, []string{l.k.Leader(role)},
		leadScript.Args(&leadArgs{Holder: holder, LeaseMs: ttl.Milliseconds()})...).Int()
	if err != nil {
		return false, fmt.Errorf("leader: lead %s: %w", role, err)
	}
	return n == 1, nil
}
