package delivery

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/ssrf"
)

// the lane lease (and the token's reclaim idle time) is the
// consumer's LaneLease, which defaults to Attempt (the delivery Timeout)+5s on the premise that one
// attempt is one POST bounded by Timeout. With webhook validation on, an
// attempt is a validation GET (bounded by Timeout on its own) and then the
// POST (another Timeout): up to 2*Timeout = 20s with the defaults, past the
// 15s lease. The token is then reclaimed and a second worker delivers the
// same head while the first is still POSTing it (and the first's finish
// deletes the second's lease, so the lane's next head can overtake).
// Here Timeout 200ms and LaneLease 300ms (the defaults' ratio), and a
// webhook taking 170ms for the GET and 170ms for the POST.
func TestValidationPlusPostOutlivesTheLease(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	posts, inFlight, maxInFlight := 0, 0, 0
	fx := newFixture(t, 1, "slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := r.URL.Query().Get("validationToken"); r.Method == http.MethodGet && tok != "" {
			time.Sleep(170 * time.Millisecond)
			_, _ = io.WriteString(w, tok)
			return
		}
		mu.Lock()
		posts++
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		time.Sleep(170 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	store := fx.store
	cfg := Config{Timeout: 200 * time.Millisecond}
	lease := outbox.ConsumerConfig{Attempt: cfg.Timeout, LaneLease: 300 * time.Millisecond} // the defaults' 10s : 15s
	validating := func(d *Deps) {
		d.Validator = mustValidator(ValidatorDeps{Store: store.hosts, Transport: fx.guard.Transport()}, ValidatorConfig{Timeout: cfg.Timeout, TTL: time.Hour})
	}
	w1 := mustNew(t, fx.deps(store.consumer(t, lease), validating), cfg)
	w2 := mustNew(t, fx.deps(store.consumer(t, lease), validating), cfg) // another instance

	toks, err := store.ReadTokens(ctx, 0, w1.consumer, 1, time.Second)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %v, err %v", toks, err)
	}
	done := make(chan struct{})
	go func() { w1.Process(ctx, toks[0]); close(done) }()
	time.Sleep(lease.LaneLease + 10*time.Millisecond) // w1 is POSTing now
	again, err := store.Reclaim(ctx, 0, w2.consumer, lease.LaneLease, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range again {
		w2.Process(ctx, tok) // w2's reclaim loop does this
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	if posts != 1 || maxInFlight > 1 {
		t.Fatalf("the notification was POSTed %d times, %d at once: one attempt (GET + POST) outlived the %v lease",
			posts, maxInFlight, lease.LaneLease)
	}
}

// Operator.Run logs the *url.Error of a failed POST, which
// carries the whole operator URL; alert URLs are typically secrets
// themselves (Slack/Discord/Teams incoming webhooks:
// https://hooks.slack.com/services/T…/B…/<secret>), and they end up in the
// logs. The delivery path strips the URL (errorText); the operator path
// does not.
func TestOperatorLogsItsSecretURL(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 6s (three tries)")
	}
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	ln := httptest.NewServer(http.NotFoundHandler())
	addr := ln.Listener.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	o := mustOperator(OperatorDeps{Log: log}, OperatorConfig{URL: "http://" + addr + "/services/T000/B000/SECRETxyz"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() { o.Run(ctx); close(stopped) }()
	o.Notify(Alert{Event: "delivery.dead", NotificationID: "n1"})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		s := buf.String()
		mu.Unlock()
		if strings.Contains(s, "operator alert not delivered") {
			if strings.Contains(s, "SECRETxyz") {
				t.Fatalf("the operator URL's secret is in the log: %s", s)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no log line")
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// alerts still queued when the operator stops are sent, not
// dropped (Workers.Run also stops the operator only after its workers
// finished their last attempts).
func TestOperatorAlertAfterStopIsLost(t *testing.T) {
	var mu sync.Mutex
	got := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got++
		mu.Unlock()
	}))
	defer srv.Close()
	o := mustOperator(OperatorDeps{Log: slog.New(slog.DiscardHandler)}, OperatorConfig{URL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	o.Notify(Alert{Event: "delivery.dead", NotificationID: "queued-at-shutdown"})
	cancel() // shutdown begins before Run took it
	go func() { o.Run(ctx); close(stopped) }()
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	if got != 1 {
		t.Fatalf("operator got %d alerts, want the dead letter decided during shutdown", got)
	}
}

// validation is meant to keep relay from sending a host traffic
// it did not ask for, but nothing is shared while a host is unvalidated:
// every attempt of every lane to it sends its own GET (no singleflight per
// host, no negative cache). 20 push configs at a host that does not echo
// (a victim) give it 20 GETs per retry round instead of 20 POSTs.
func TestUnvalidatedHostGetsOneGETPerAttempt(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	store := newTestStore(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1})
	var mu sync.Mutex
	gets := 0
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer victim.Close()
	guard, _ := ssrf.NewGuard([]string{"127.0.0.0/8"})
	v := mustValidator(ValidatorDeps{Store: store.hosts, Transport: guard.Transport()}, ValidatorConfig{Timeout: time.Second, TTL: time.Hour})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { _ = v.Check(ctx, victim.URL+"/hook/"+strconv.Itoa(i)) })
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if gets > 1 {
		t.Fatalf("%d validation GETs to one unvalidated host from 20 concurrent attempts", gets)
	}
}
