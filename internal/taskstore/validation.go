package taskstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// HostValidated reports whether host passed webhook URL validation (and
// the mark has not expired).
func (s *Store) HostValidated(ctx context.Context, host string) (bool, error) {
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
func (s *Store) MarkHostValidated(ctx context.Context, host string, ttl time.Duration) error {
	if err := s.rdb.Set(ctx, s.k.HostValidated(host), time.Now().UTC().Format(time.RFC3339), ttl).Err(); err != nil {
		return fmt.Errorf("taskstore: webhook validation: %w", err)
	}
	return nil
}
