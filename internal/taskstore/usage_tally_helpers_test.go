package taskstore

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// usageCounter reads owner's usage counter in Redis of task's partition
// and the bucket of at; ok is false when there is none.
func usageCounter(t *testing.T, rdb redis.UniversalClient, s *Store, owner, task string, at time.Time) (n int64, ok bool) {
	t.Helper()
	v, err := rdb.Get(context.Background(), s.k.Usage(s.k.Partition(task), owner, s.usage.bucket(at))).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	n, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n, true
}
