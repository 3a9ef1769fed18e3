package health

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func cfgFail(task, cfg, name string, n int64, at time.Time) ConfigOutcomes {
	o := fail(name, n, at)
	o.RunFailed, o.RunStart = n, at
	return ConfigOutcomes{ConfigRef: ConfigRef{TaskID: task, ConfigID: cfg}, Outcomes: o}
}

func cfgOK(task, cfg, name string, at time.Time) ConfigOutcomes {
	return ConfigOutcomes{ConfigRef: ConfigRef{TaskID: task, ConfigID: cfg}, Outcomes: ok(name, at)}
}

// Each push config has health of its own (successes, failures, the
// current failure run and when it started, the last error and success),
// over configs of many task partitions recorded in one call, and kept for
// ConfigKeep after its last outcome.
func TestConfigHealthIsKeptPerPushConfig(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{ConfigKeep: 3 * time.Hour})
	ctx := context.Background()
	var batch []ConfigOutcomes
	for i := range 12 { // over every one of the 4 partitions
		batch = append(batch, cfgFail(fmt.Sprintf("task-%d", i), "c", "a", 2, t0))
	}
	batch = append(batch, cfgOK("task-0", "other", "a", t0))
	if err := s.RecordConfigs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordConfigs(ctx, []ConfigOutcomes{cfgFail("task-0", "c", "a", 3, t0.Add(time.Minute))}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Config(ctx, "task-0", "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Failed != 5 || c.Succeeded != 0 || c.ConsecutiveFailures != 5 || c.FailingSince == nil || !c.FailingSince.Equal(t0) ||
		c.LastError != "HTTP 500" || c.EndpointID != id("a") || c.LastSuccess != nil {
		t.Fatalf("task-0/c: %+v", c)
	}
	if c, err := s.Config(ctx, "task-11", "c"); err != nil || c.Failed != 2 || c.ConsecutiveFailures != 2 {
		t.Fatalf("task-11/c: %+v %v", c, err)
	}
	if c, err := s.Config(ctx, "task-0", "other"); err != nil || c.Succeeded != 1 || c.ConsecutiveFailures != 0 ||
		c.LastSuccess == nil || !c.LastSuccess.Equal(t0) {
		t.Fatalf("task-0/other: %+v %v", c, err)
	}
	// A success ends the run; the failures after it in the same batch
	// start the next one.
	later := cfgOK("task-0", "c", "a", t0.Add(2*time.Minute))
	later.Failed, later.FirstFailed, later.LastFailed, later.LastError = 1, t0.Add(3*time.Minute), t0.Add(3*time.Minute), "timeout"
	later.RunFailed, later.RunStart = 1, t0.Add(3*time.Minute)
	if err := s.RecordConfigs(ctx, []ConfigOutcomes{later}); err != nil {
		t.Fatal(err)
	}
	c, _ = s.Config(ctx, "task-0", "c")
	if c.Succeeded != 1 || c.Failed != 6 || c.ConsecutiveFailures != 1 || !c.FailingSince.Equal(t0.Add(3*time.Minute)) ||
		c.LastError != "timeout" {
		t.Fatalf("after a success: %+v", c)
	}
	ttl, err := s.rdb.PTTL(ctx, s.k.ConfigHealth("task-0", "c")).Result()
	if err != nil || ttl <= 2*time.Hour || ttl > 3*time.Hour {
		t.Fatalf("config health expires in %v (%v), want ConfigKeep", ttl, err)
	}
	if _, err := s.Config(ctx, "task-0", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown config: %v", err)
	}
}

// An endpoint's page lists the configs that send to it, each with its
// health, the latest first; a config that moved to another URL is listed
// under that one only.
func TestEndpointListsItsConfigs(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{})
	ctx := context.Background()
	a := fail("a", 1, t0)
	a.Configs = []ConfigRef{{"t1", "c1"}, {"t2", "c2"}}
	if _, err := s.Record(ctx, t0, []Outcomes{a}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordConfigs(ctx, []ConfigOutcomes{cfgFail("t1", "c1", "a", 1, t0), cfgOK("t2", "c2", "a", t0)}); err != nil {
		t.Fatal(err)
	}
	b := ok("b", t0.Add(time.Second))
	b.Configs = []ConfigRef{{"t2", "c2"}}
	if _, err := s.Record(ctx, t0.Add(time.Second), []Outcomes{b}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordConfigs(ctx, []ConfigOutcomes{cfgOK("t2", "c2", "b", t0.Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	e, err := s.Get(ctx, id("a"), t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Configs) != 1 || e.Configs[0].ConfigRef != (ConfigRef{"t1", "c1"}) || e.Configs[0].ConsecutiveFailures != 1 {
		t.Fatalf("endpoint a's configs: %+v", e.Configs)
	}
	e, _ = s.Get(ctx, id("b"), t0.Add(time.Second))
	if len(e.Configs) != 1 || e.Configs[0].ConfigRef != (ConfigRef{"t2", "c2"}) || e.Configs[0].Succeeded != 2 {
		t.Fatalf("endpoint b's configs: %+v", e.Configs)
	}
	// Bounded: the latest MaxConfigs.
	many := ok("c", t0)
	for i := range MaxConfigs + 20 {
		many.Configs = append(many.Configs, ConfigRef{fmt.Sprintf("t%d", i), "c"})
	}
	if _, err := s.Record(ctx, t0, []Outcomes{many}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.rdb.ZCard(ctx, s.k.EndpointConfigs(id("c"))).Result(); n != MaxConfigs {
		t.Fatalf("endpoint c keeps %d configs, want %d", n, MaxConfigs)
	}
}
