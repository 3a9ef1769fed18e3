package delivery

import (
	"net/http"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/ssrf"
)

// An attempt that failed in relay's own egress proxy (error class proxy)
// says nothing of the endpoint: counted as its failure, a proxy down for a
// while would disable every endpoint relay sends to.
func TestAFailingEgressProxyIsNotTheEndpointsFailure(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, 1, "proxyfail", http.NotFoundHandler())
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Health = &failingOnce{} }), Config{})
	url := "https://hooks.example.test/h"
	id := health.EndpointID("", url)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	w.health.count(outbox.Retry, Attempt{Time: at, URL: url, endpoint: id, ErrorClass: ssrf.ClassProxy})
	w.health.count(outbox.Dead, Attempt{Time: at, URL: url, endpoint: id, ErrorClass: ssrf.ClassProxy})
	if n := len(w.health.counts); n != 0 {
		t.Fatalf("proxy failures counted for %d endpoints, want none", n)
	}
	w.health.count(outbox.Retry, Attempt{Time: at, URL: url, endpoint: id, Status: 500, ErrorClass: "http"})
	if c := w.health.counts[id]; c == nil || c.Failed != 1 {
		t.Fatalf("an endpoint's own failure counted %+v, want 1", c)
	}
}
