package health

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A flush of an endpoint's outcomes within the bucket of its last one, by
// configs it has listed already, writes its hash with one HSET and trims
// neither its configs nor the endpoint index: those are trimmed by count
// when a config is added, and by age once a bucket (the next flush of a
// new bucket drops a config and an endpoint older than their keeps).
func TestAnEndpointsFlushWithinABucketWritesItsHashOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	s, err := New(rdb, layout.New("p", 1), Config{Keep: 48 * time.Hour, ConfigKeep: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	flush := func(at time.Time, o Outcomes, configs ...ConfigRef) {
		t.Helper()
		o.Configs = configs
		if _, err := s.Record(ctx, at, []Outcomes{o}); err != nil {
			t.Fatal(err)
		}
	}
	old := ConfigRef{"t0", "c"}
	flush(t0, ok("gone", t0), old)
	flush(t0.Add(time.Hour), ok("a", t0.Add(time.Hour)), old)
	flush(t0.Add(26*time.Hour), fail("a", 1, t0.Add(26*time.Hour)), ConfigRef{"t1", "c"})
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(26*time.Hour + time.Minute) // the same bucket
	flush(at, ok("a", at), ConfigRef{"t1", "c"})
	got := redistest.CommandCalls(t, rdb)
	for name, n := range map[string]int{"hmget": 1, "hset": 1, "hincrby": 1, "zadd": 2, "pexpire": 2} {
		if got[name] != n {
			t.Errorf("%s ran %d times, want %d (all: %v)", name, got[name], n, got)
		}
	}
	for _, name := range []string{"zremrangebyscore", "zremrangebyrank", "hkeys"} {
		if got[name] != 0 {
			t.Errorf("%s ran %d times, want none (all: %v)", name, got[name], got)
		}
	}
	e, err := s.Get(ctx, id("a"), at) // (the window holds this bucket's outcomes: t0+1h's fell out)
	if err != nil || e.Succeeded != 1 || e.Failed != 1 || e.ConsecutiveFailures != 0 || e.LastSuccess == nil || !e.LastSuccess.Equal(at) ||
		e.LastErrorAt == nil || e.LastError != "HTTP 500" {
		t.Fatalf("endpoint a: %+v, %v", e, err)
	}
	// The bucket change of t0+26h dropped the config seen at t0+1h, more
	// than a ConfigKeep before; a bucket change after a Keep since t0
	// drops the endpoint seen last then from the index.
	if n, _ := rdb.ZScore(ctx, s.k.EndpointConfigs(id("a")), `["t0","c"]`).Result(); n != 0 {
		t.Fatalf("endpoint a still lists the config it last saw at %v", time.UnixMilli(int64(n)))
	}
	if err := rdb.ZScore(ctx, s.k.Endpoints(), id("gone")).Err(); err != nil {
		t.Fatalf("endpoint gone is not indexed before a keep passed: %v", err)
	}
	flush(t0.Add(49*time.Hour), ok("a", t0.Add(49*time.Hour)))
	if err := rdb.ZScore(ctx, s.k.Endpoints(), id("gone")).Err(); err != redis.Nil {
		t.Fatalf("endpoint gone, last seen a keep ago, is still indexed (%v)", err)
	}
}
