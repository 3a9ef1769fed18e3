package delivery

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

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
			stop := runWorkers(mustNew(t, Deps{Queue: fx.store.consumer(t, outbox.ConsumerConfig{}), Tasks: fx.store, Leader: fx.store, Signer: fx.keys,
				Dial: strict.DialContext, Log: fx.log}, Config{Outbox: onOutbox}))
			defer stop()
			var dead []outbox.DeliveryRecord
			for deadline := time.Now().Add(10 * time.Second); len(dead) == 0; {
				if time.Now().After(deadline) {
					recs, _, _ := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "walled", Limit: 10})
					for _, r := range recs {
						t.Logf("%s: %s after %d attempts", r.ID, r.Status, r.Attempts)
					}
					t.Fatal("not dead-lettered within 10 s (a retry is due 1 s after the first attempt)")
				}
				time.Sleep(20 * time.Millisecond)
				if dead, _, err = fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "walled", Status: "dead", Limit: 10}); err != nil {
					t.Fatal(err)
				}
			}
			r := dead[0]
			if r.Attempts != 1 || len(r.AttemptLog) != 1 {
				t.Fatalf("dead after %d attempts (%d logged), want 1", r.Attempts, len(r.AttemptLog))
			}
			var a Attempt
			if err := json.Unmarshal(r.AttemptLog[0], &a); err != nil || a.ErrorClass != ssrf.ClassBlocked {
				t.Fatalf("attempt %s (%v): want class %s", r.AttemptLog[0], err, ssrf.ClassBlocked)
			}
			if n := posts.Load(); n != 0 {
				t.Fatalf("%d POSTs reached the refused address", n)
			}
		})
	}
}
