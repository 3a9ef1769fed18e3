package delivery

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/redistest"
)

// failingOnce is the endpoint health whose first Record fails, as Redis
// failing over would.
type failingOnce struct {
	*health.Store
	mu                   sync.Mutex
	failed, configFailed bool
}

func (f *failingOnce) RecordConfigs(ctx context.Context, batch []health.ConfigOutcomes) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.configFailed {
		f.configFailed = true
		return errors.New("redis failed over")
	}
	return f.Store.RecordConfigs(ctx, batch)
}

func (f *failingOnce) Record(ctx context.Context, now time.Time, batch []health.Outcomes) ([]health.Change, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failed {
		f.failed = true
		return nil, errors.New("redis failed over")
	}
	return f.Store.Record(ctx, now, batch)
}

// Outcomes counted while Redis did not take them are added at the next
// flush, merged with those counted since: the failure run keeps its count
// and its start, and a later success ends it; the same for the push
// config's own health, and the endpoint still lists the config.
func TestEndpointOutcomesRedisDidNotTakeAreAddedLater(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, 1, "outcomes", http.NotFoundHandler())
	rdb, prefix := redistest.New(t)
	hs, err := health.New(rdb, layout.New(strings.TrimSuffix(prefix, ":"), 1), health.Config{DisableAfterFailures: 1000})
	if err != nil {
		t.Fatal(err)
	}
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Health = &failingOnce{Store: hs} }), Config{})
	url := "https://hooks.example.test/h"
	id := health.EndpointID("", url)
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	fail := func(at time.Time) {
		w.health.count(outbox.Retry, Attempt{Time: at, URL: url, endpoint: id, Status: 500, ErrorClass: "http", TaskID: "t", ConfigID: "c"})
	}
	ctx := context.Background()
	fail(t0)
	fail(t0.Add(time.Second))
	w.flushHealth(ctx) // Redis fails: kept
	fail(t0.Add(2 * time.Second))
	w.flushHealth(ctx)
	e, err := hs.Get(ctx, id, t0.Add(3*time.Second))
	if err != nil || e.Failed != 3 || e.ConsecutiveFailures != 3 || e.FailingSince == nil || !e.FailingSince.Equal(t0) || e.LastError != "HTTP 500" {
		t.Fatalf("after the retried flush: %+v, %v; want 3 failures in a row since %s", e, err, t0)
	}
	c, err := hs.Config(ctx, "t", "c")
	if err != nil || c.Failed != 3 || c.ConsecutiveFailures != 3 || c.FailingSince == nil || !c.FailingSince.Equal(t0) || c.LastError != "HTTP 500" {
		t.Fatalf("the config after the retried flush: %+v, %v; want 3 failures in a row since %s", c, err, t0)
	}
	if len(e.Configs) != 1 || e.Configs[0].ConfigRef != (health.ConfigRef{TaskID: "t", ConfigID: "c"}) {
		t.Fatalf("the endpoint's configs: %+v", e.Configs)
	}
	fail(t0.Add(3 * time.Second))
	w.health.count(outbox.Delivered, Attempt{Time: t0.Add(4 * time.Second), URL: url, endpoint: id, TaskID: "t", ConfigID: "c"})
	w.flushHealth(ctx)
	if e, _ = hs.Get(ctx, id, t0.Add(5*time.Second)); e.Failed != 4 || e.Succeeded != 1 || e.ConsecutiveFailures != 0 || e.FailingSince != nil {
		t.Fatalf("after a success: %+v; want the run ended", e)
	}
	if c, _ = hs.Config(ctx, "t", "c"); c.Failed != 4 || c.Succeeded != 1 || c.ConsecutiveFailures != 0 || c.FailingSince != nil {
		t.Fatalf("the config after a success: %+v; want the run ended", c)
	}
}
