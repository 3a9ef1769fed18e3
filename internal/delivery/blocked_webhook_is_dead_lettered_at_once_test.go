package delivery

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/ssrf"
)

// A webhook whose host resolves to an address the SSRF guard refuses is
// dead-lettered at its first attempt, with class blocked, on both delivery
// paths: no retry can reach it until an operator changes the allowlist or
// the webhook's DNS, so retrying twelve times only delays the operator's
// alert. Nothing is sent to the refused address.
func TestBlockedWebhookIsDeadLetteredAtOnce(t *testing.T) {
	t.Parallel()
	for _, onOutbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[onOutbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var posts atomic.Int32
			hook := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { posts.Add(1) })
			fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: onOutbox}, a2a.V10, "walled", hook)
			strict, err := ssrf.NewGuard(nil) // the webhook is on loopback, which only an allowlist opens
			if err != nil {
				t.Fatal(err)
			}
			stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Dial = strict.DialContext }), Config{Outbox: onOutbox}))
			defer stop()
			_, a := fx.deadAfterOneAttempt(t, ctx, "walled")
			if a.ErrorClass != ssrf.ClassBlocked {
				t.Fatalf("attempt %+v: want class %s", a, ssrf.ClassBlocked)
			}
			if n := posts.Load(); n != 0 {
				t.Fatalf("%d POSTs reached the refused address", n)
			}
		})
	}
}
