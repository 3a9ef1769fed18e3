package taskstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// HostValidations remembers which webhook hosts passed URL validation
// (delivery.Validator asks and marks them; layout.Keys.HostValidated), for
// every instance. It is no task storage: it only lives here beside the
// other Redis state of webhooks (the URL index), since delivery never
// touches Redis itself. It never validates a host (the Validator does).
type HostValidations struct {
	rdb redis.UniversalClient
	k   layout.Keys
}

// NewHostValidations returns the host marks over d.RDB, named by d.Keys
// (d.Batch is not used), or an error naming what is missing.
func NewHostValidations(d Deps) (*HostValidations, error) {
	if err := d.check("host validations", false); err != nil {
		return nil, err
	}
	return &HostValidations{rdb: d.RDB, k: d.Keys}, nil
}

// HostValidated reports whether host passed webhook URL validation (and
// the mark has not expired).
func (s *HostValidations) HostValidated(ctx context.Context, host string) (bool, error) {
	err := s.rdb.Get(ctx, s.k.HostValidated(host)).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("taskstore: webhook validation: %w", err)
	}
	return true, nil
}

// MarkHostValidated remembers for ttl that host passed validation.
func (s *HostValidations) MarkHostValidated(ctx context.Context, host string, ttl time.Duration) error {
	if err := s.rdb.Set(ctx, s.k.HostValidated(host), time.Now().UTC().Format(time.RFC3339), ttl).Err(); err != nil {
		return fmt.Errorf("taskstore: webhook validation: %w", err)
	}
	return nil
}
