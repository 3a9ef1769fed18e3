package taskstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// A URL index that goes between two writes of a relay within a slack (an
// operator deletes it, Redis evicts it, a failover loses it) is made again
// by the second write: that write notices (the index has lost its anchor)
// and sets its expiry, so that the index does not live for ever.
func TestAURLIndexRemovedMeanwhileGetsItsExpiryAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := urlIndexOn(rdb, strings.TrimSuffix(prefix, ":"), 4, URLIndexConfig{Horizon: 8*time.Hour + 8*time.Hour})
	const url = "http://hooks.example/removed"
	h, _ := urlHash(url)
	key := s.k.URLConfigs(h)
	now := time.Now()
	if err := s.IndexPushURL(ctx, url, "task-a", "a", now); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.IndexPushURL(ctx, url, "task-b", "b", now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	ms, err := rdb.Do(ctx, "PEXPIRETIME", key).Int64()
	if err != nil || ms < now.Add(s.urlHorizon).UnixMilli() {
		t.Fatalf("the index made again expires at %d (%v); want a horizon on (-1: never)", ms, err)
	}
	// Its next write within the slack is one ZADD again, and the key keeps
	// its expiry.
	if err := s.IndexPushURL(ctx, url, "task-c", "c", now.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl <= 0 {
		t.Fatalf("the index's time to live is %v (%v)", ttl, err)
	}
}
