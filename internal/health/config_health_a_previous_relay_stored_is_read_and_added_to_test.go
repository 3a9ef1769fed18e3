package health

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// A push config's health that the previous relay stored (a hash) is read
// as it is, by a config's read and by its endpoint's page, and the next
// outcomes are added to it (its failure run goes on), after which it is
// stored in this relay's form, expiring a ConfigKeep after that outcome.
func TestConfigHealthAPreviousRelayStoredIsReadAndAddedTo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, Config{ConfigKeep: 3 * time.Hour})
	old := storePreviousRelaysHealth(t, s, "t1", "c")
	s.rdb.PExpire(ctx, old, time.Hour)
	want := func(c ConfigHealth, ok, failed, consec int64, lastErr string) {
		t.Helper()
		if c.Succeeded != ok || c.Failed != failed || c.ConsecutiveFailures != consec || c.LastError != lastErr ||
			c.FailingSince == nil || !c.FailingSince.Equal(t0) || c.LastSuccess == nil || !c.LastSuccess.Equal(t0.Add(-time.Minute)) ||
			c.EndpointID != id("a") || c.URL != "https://x.test/a" {
			t.Fatalf("health %+v, want %d ok, %d failed, a run of %d since %v, last error %q", c, ok, failed, consec, t0, lastErr)
		}
	}
	c, err := s.Config(ctx, "t1", "c")
	if err != nil {
		t.Fatal(err)
	}
	want(c, 3, 2, 2, "timeout")
	// The endpoint's page lists it beside a config of this relay's form.
	a := fail("a", 1, t0)
	a.Configs = []ConfigRef{{"t1", "c"}, {"t2", "c"}}
	if _, err := s.Record(ctx, t0, []Outcomes{a}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordConfigs(ctx, []ConfigOutcomes{cfgFail("t2", "c", "a", 1, t0)}); err != nil {
		t.Fatal(err)
	}
	e, err := s.Get(ctx, id("a"), t0)
	if err != nil || len(e.Configs) != 2 {
		t.Fatalf("endpoint a lists %+v, %v; want both configs", e.Configs, err)
	}
	for _, c := range e.Configs {
		if c.ConfigRef == (ConfigRef{"t1", "c"}) {
			want(c, 3, 2, 2, "timeout")
		}
	}
	// Outcomes added to it: its run goes on.
	if err := s.RecordConfigs(ctx, []ConfigOutcomes{cfgFail("t1", "c", "a", 3, t0.Add(time.Minute))}); err != nil {
		t.Fatal(err)
	}
	if c, err = s.Config(ctx, "t1", "c"); err != nil {
		t.Fatal(err)
	}
	want(c, 3, 5, 5, "HTTP 500")
	if ttl := s.rdb.PTTL(ctx, old).Val(); ttl <= 2*time.Hour || ttl > 3*time.Hour {
		t.Fatalf("after an outcome it expires in %v, want ConfigKeep", ttl)
	}
}

// storePreviousRelaysHealth stores config c of task as the previous
// relay's config.lua did (a hash): endpoint a, 3 successes, the last a
// minute before t0, and a run of 2 failures since t0, the last ("timeout")
// a second after it. It returns the key.
func storePreviousRelaysHealth(t *testing.T, s *Store, task, c string) string {
	t.Helper()
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	old := s.k.ConfigHealth(task, c)
	if err := s.rdb.HSet(context.Background(), old, "endpoint", id("a"), "url", "https://x.test/a", "ok", "3", "failed", "2", "consec", "2",
		"since", ms(t0), "lastErr", "timeout", "lastErrAt", ms(t0.Add(time.Second)), "lastOk", ms(t0.Add(-time.Minute))).Err(); err != nil {
		t.Fatal(err)
	}
	return old
}
