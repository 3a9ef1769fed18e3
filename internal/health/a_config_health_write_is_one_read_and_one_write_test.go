package health

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// Adding outcomes to a push config's health costs Redis one read and one
// write of it, the write setting its expiry (no separate PEXPIRE), whether
// the config is new or not: a flush of three configs of one partition,
// twice, runs three GETs and three SETs each (INFO commandstats of a Redis
// of the test's own counts what scripts run).
func TestAConfigHealthWriteIsOneReadAndOneWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	s, err := New(rdb, layout.New("p", 1), Config{ConfigKeep: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	batch := []ConfigOutcomes{cfgOK("t1", "c", "a", t0), cfgFail("t2", "c", "a", 2, t0), cfgOK("t3", "c", "b", t0)}
	for range 2 {
		if err := s.RecordConfigs(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	got := redistest.CommandCalls(t, rdb)
	want := map[string]int{"get": 6, "set": 6}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s ran %d times, want %d (all: %v)", name, got[name], n, got)
		}
	}
	for _, name := range []string{"pexpire", "hset", "hmget"} {
		if got[name] != 0 {
			t.Errorf("%s ran %d times, want none (all: %v)", name, got[name], got)
		}
	}
	// And they are right, and expire a ConfigKeep after the last outcome.
	if c, err := s.Config(ctx, "t2", "c"); err != nil || c.Failed != 4 || c.ConsecutiveFailures != 4 || c.LastError != "HTTP 500" ||
		c.FailingSince == nil || !c.FailingSince.Equal(t0) || c.EndpointID != id("a") || c.URL != "https://x.test/a" {
		t.Fatalf("t2/c: %+v, %v", c, err)
	}
	if c, err := s.Config(ctx, "t3", "c"); err != nil || c.Succeeded != 2 || c.ConsecutiveFailures != 0 || c.LastSuccess == nil ||
		!c.LastSuccess.Equal(t0) || c.EndpointID != id("b") {
		t.Fatalf("t3/c: %+v, %v", c, err)
	}
	if ttl := rdb.PTTL(ctx, s.k.ConfigHealth("t1", "c")).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("t1/c's health expires in %v, want ConfigKeep (1h)", ttl)
	}
}
