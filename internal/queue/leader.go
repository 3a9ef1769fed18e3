package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// leadScript keeps or takes a named lease: the holder renews its own, and
// anyone takes one that expired.
var leadScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0`)

// Lead reports whether holder leads role now: it renews holder's lease for
// ttl, or takes the lease when nobody holds it. Where one instance is
// enough for a job (housekeeping), the instances that do not lead skip it;
// when the leader dies its lease runs out and another takes over.
func (s *Store) Lead(ctx context.Context, role, holder string, ttl time.Duration) (bool, error) {
	n, err := leadScript.Run(ctx, s.rdb, []string{s.k.prefix + ":leader:{" + role + "}"}, holder, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("queue: lead %s: %w", role, err)
	}
	return n == 1, nil
}
