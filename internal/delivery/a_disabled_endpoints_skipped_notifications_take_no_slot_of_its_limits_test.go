package delivery

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/redistest"
)

// The notifications of a disabled endpoint are skipped without a POST, so
// they take nothing of the limits of its URL: the throttle is not asked
// (a rate token each would be taken from the URL's rate, which the configs
// of other clients sending to that URL share, and a replay of a window to
// an endpoint still disabled would wait on the limit to be skipped).
func TestADisabledEndpointsSkippedNotificationsTakeNoSlotOfItsLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &stateRecorder{}
	fx := newFixture(t, 1, "held", hook)
	rdb, prefix := redistest.New(t)
	hs, err := health.New(rdb, layout.New(strings.TrimSuffix(prefix, ":"), 1), health.Config{DisableAfterFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	th := &countingThrottle{}
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Throttle, d.Health = th, hs }),
		Config{HostMaxConcurrent: 4})
	id := health.EndpointID("", fx.hookURL)
	w.health.count(outbox.Retry, Attempt{Time: time.Now(), URL: fx.hookURL, endpoint: id, Status: 500, ErrorClass: "http", TaskID: "held", ConfigID: "hook"})
	w.flushHealth(ctx)
	if on, err := hs.IsDisabled(ctx, id); err != nil || !on {
		t.Fatalf("the endpoint is not disabled (%v, %v)", on, err)
	}
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "held", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "held", working, working); err != nil {
		t.Fatal(err)
	}
	fx.drain(t, w)
	if got := len(hook.got()); got != 0 {
		t.Fatalf("a disabled endpoint was sent %d notifications", got)
	}
	if a, r := th.asked.Load(), th.released.Load(); a != 0 || r != 0 {
		t.Fatalf("skipped notifications asked the throttle %d times (released %d), want none", a, r)
	}
}
