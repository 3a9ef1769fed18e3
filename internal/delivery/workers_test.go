package delivery

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/ssrf"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// crashingQueue loses the first FinishToken, as a worker killed after its
// POST and before its ack would.
type crashingQueue struct {
	*outbox.Consumer
	mu      sync.Mutex
	crashed bool
}

func (c *crashingQueue) FinishToken(ctx context.Context, t outbox.Token, h outbox.Head, f outbox.Finish) (outbox.Finished, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.crashed {
		c.crashed = true
		return outbox.Finished{}, errors.New("killed before ack")
	}
	return c.Consumer.FinishToken(ctx, t, h, f)
}

func TestKilledWorkerLeadsToRedeliveryWithSameID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idRecorder{}
	fx := newFixture(t, 2, "killed", hook)
	store := fx.store
	lease := outbox.ConsumerConfig{LaneLease: 50 * time.Millisecond}
	crashing := &crashingQueue{Consumer: store.consumer(t, lease)}
	w1 := mustNew(t, fx.deps(crashing), Config{})
	w2 := mustNew(t, fx.deps(store.consumer(t, lease)), Config{})

	toks, err := store.ReadTokens(ctx, store.PartitionOf("killed"), w1.consumer, 10, time.Second)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %v, err %v", toks, err)
	}
	w1.Process(ctx, toks[0]) // POSTs, then dies before the ack
	time.Sleep(60 * time.Millisecond)
	again, err := store.Reclaim(ctx, store.PartitionOf("killed"), w2.consumer, lease.LaneLease, 10)
	if err != nil || len(again) != 1 || again[0].ID != toks[0].ID {
		t.Fatalf("reclaimed %v, err %v", again, err)
	}
	w2.Process(ctx, again[0])
	ids := hook.got()
	if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("notification ids %v: want the same id twice", ids)
	}
	rec, err := store.Delivery(ctx, ids[0])
	if err != nil || rec.Status != "delivered" {
		t.Fatalf("record %+v, err %v", rec, err)
	}
	// The token is gone: nothing is left to reclaim.
	if left, _ := store.Reclaim(ctx, store.PartitionOf("killed"), w2.consumer, 0, 10); len(left) != 0 {
		t.Fatalf("tokens left after the ack: %v", left)
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	p := Policy{Initial: time.Second, MaxInterval: 10 * time.Second, MaxAttempts: 9, MaxElapsed: time.Hour, Jitter: 0.2}
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name    string
		r       result
		n       int
		first   time.Time
		want    outbox.Outcome
		minWait time.Duration
		maxWait time.Duration
	}{
		{"2xx", result{status: 204}, 1, now, outbox.Delivered, 0, 0},
		{"410", result{status: 410}, 1, now, outbox.Gone, 0, 0},
		{"500 first", result{status: 500}, 1, now, outbox.Retry, 800 * time.Millisecond, 1200 * time.Millisecond},
		{"500 third", result{status: 500}, 3, now, outbox.Retry, 3200 * time.Millisecond, 4800 * time.Millisecond},
		{"fourth", result{status: 500}, 4, now, outbox.Retry, 6400 * time.Millisecond, 9600 * time.Millisecond},
		{"capped", result{status: 500}, 8, now.Add(-time.Minute), outbox.Retry, 8 * time.Second, 12 * time.Second},
		{"redirect is a failure", result{status: 302}, 1, now, outbox.Retry, 800 * time.Millisecond, 1200 * time.Millisecond},
		{"retry-after", result{status: 429, retryAfter: 7 * time.Second}, 1, now, outbox.Retry, 7 * time.Second, 7 * time.Second},
		{"retry-after bounded", result{status: 503, retryAfter: time.Hour}, 1, now, outbox.Retry, 10 * time.Second, 10 * time.Second},
		{"network error", result{err: errors.New("refused")}, 2, now, outbox.Retry, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{"blocked by the SSRF guard", result{err: errors.New("blocked"), blocked: true}, 1, now, outbox.Dead, 0, 0},
		{"attempts spent", result{status: 500}, 9, now, outbox.Dead, 0, 0},
		{"elapsed spent", result{status: 500}, 2, now.Add(-time.Hour), outbox.Dead, 0, 0},
	} {
		got, due, _ := p.decide(tc.r, tc.n, tc.first, now)
		if got != tc.want {
			t.Errorf("%s: outcome %s, want %s", tc.name, got, tc.want)
		}
		if wait := due.Sub(now); got == outbox.Retry && (wait < tc.minWait || wait > tc.maxWait) {
			t.Errorf("%s: wait %s, want %s..%s", tc.name, wait, tc.minWait, tc.maxWait)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"": 0, "3": 3 * time.Second, "-1": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := parseRetryAfter(h, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", h, got, want)
		}
	}
}

// A token handed out twice (a reclaim while the first copy still waited in
// memory) is delivered once: a copy that starts while the other delivers
// finds the lane leased, and one that starts after it finds the token done.
func TestDuplicateTokenCopiesDeliverOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	posts := 0
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	fx := newFixture(t, 1, "dup", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
		arrived <- struct{}{}
		<-release
	}))
	store := fx.store
	w1 := mustNew(t, fx.deps(store.consumer(t, outbox.ConsumerConfig{})), Config{})
	w2 := mustNew(t, fx.deps(store.consumer(t, outbox.ConsumerConfig{})), Config{})
	toks, err := store.ReadTokens(ctx, 0, w1.consumer, 1, time.Second)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %v, err %v", toks, err)
	}
	done := make(chan struct{})
	go func() { w1.Process(ctx, toks[0]); close(done) }()
	<-arrived                // the first copy is delivering
	w2.Process(ctx, toks[0]) // the second copy, meanwhile: the lane is leased
	close(release)
	<-done
	w2.Process(ctx, toks[0]) // and afterwards: the token is finished
	mu.Lock()
	defer mu.Unlock()
	if posts != 1 {
		t.Fatalf("the notification was POSTed %d times, want once", posts)
	}
}

// pausingQueue freezes the worker's clock forward right after Begin, as a
// process paused (VM freeze, SIGSTOP) between taking the lane and POSTing.
type pausingQueue struct {
	*outbox.Consumer
	advance func()
}

func (p *pausingQueue) Begin(ctx context.Context, t outbox.Token) (outbox.Head, int, error) {
	h, st, err := p.Consumer.Begin(ctx, t)
	p.advance()
	return h, st, err
}

// A worker that wakes up with too little of its lane lease left does not
// POST (another worker may deliver the lane by now); the token stays
// pending and another worker delivers it, once.
func TestPausedWorkerDoesNotPostPastItsLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idRecorder{}
	fx := newFixture(t, 2, "paused", hook)
	store := fx.store
	cfg := Config{Timeout: time.Second}
	lease := outbox.ConsumerConfig{Attempt: cfg.Timeout, LaneLease: 100 * time.Millisecond}
	clock := time.Now()
	paused := &pausingQueue{Consumer: store.consumer(t, outbox.ConsumerConfig{Attempt: 50 * time.Millisecond, LaneLease: 100 * time.Millisecond,
		Now: func() time.Time { return clock }})}
	w1 := mustNew(t, fx.deps(paused), Config{Timeout: 50 * time.Millisecond})
	w1.now = func() time.Time { return clock }
	paused.advance = func() { clock = clock.Add(80 * time.Millisecond) } // 80ms of a 100ms lease gone, 50ms needed
	toks, err := store.ReadTokens(ctx, store.PartitionOf("paused"), w1.consumer, 10, time.Second)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %v, err %v", toks, err)
	}
	w1.Process(ctx, toks[0])
	if ids := hook.got(); len(ids) != 0 {
		t.Fatalf("the paused worker POSTed %v", ids)
	}
	time.Sleep(150 * time.Millisecond)
	w2 := mustNew(t, fx.deps(store.consumer(t, lease)), cfg)
	again, err := store.Reclaim(ctx, store.PartitionOf("paused"), w2.consumer, lease.LaneLease, 10)
	if err != nil || len(again) != 1 {
		t.Fatalf("reclaimed %v, err %v", again, err)
	}
	w2.Process(ctx, again[0])
	if ids := hook.got(); len(ids) != 1 {
		t.Fatalf("notification POSTed %d times, want once", len(ids))
	}
}

// fixture is a store with one task whose v1.0 push config points at hook,
// and what workers need to deliver it: signing keys and a loopback guard.
type fixture struct {
	store  *testStore
	keys   *auth.Keys
	guard  *ssrf.Guard
	log    *slog.Logger
	commit *ingest.Committer
	// hookURL is the URL of the test's webhook.
	hookURL string
	rdb     redis.UniversalClient
}

func newFixture(t testing.TB, partitions int, taskID string, hook http.Handler) fixture {
	t.Helper()
	return newFixtureWith(t, storeConfig{Partitions: partitions}, a2a.V10, taskID, hook)
}

// newFixtureWith is newFixture on a store configured as cfg (its prefix
// set here), with the task's webhook in dialect d.
func newFixtureWith(t testing.TB, cfg storeConfig, d a2a.Dialect, taskID string, hook http.Handler) fixture {
	t.Helper()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	prefix = strings.TrimSuffix(prefix, ":")
	cfg.Prefix = prefix
	store := newTestStore(rdb, cfg)
	if err := store.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	commit, err := ingest.NewCommitter(ingest.CommitterDeps{Store: store, Turns: store.turns, URLs: store.urls, Hub: ingest.NewHub()}, ingest.CommitterConfig{Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	task := a2a.Task{ID: taskID, ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateSubmitted}}
	push := a2a.PushConfig{ID: "hook", TaskID: taskID, URL: srv.URL + "/hook", Dialect: d}
	if _, err := commit.Create(ctx, task, d, []a2a.PushConfig{push}); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.NewKeys(ctx, rdb, auth.KeyConfig{Prefix: prefix}, nil)
	if err != nil {
		t.Fatal(err)
	}
	guard, err := ssrf.NewGuard([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{store: store, keys: keys, guard: guard, log: slog.New(slog.NewTextHandler(io.Discard, nil)), commit: commit,
		hookURL: srv.URL + "/hook", rdb: rdb}
}

// deps are the workers' dependencies on the fixture, taking tokens from q
// (fx.store.consumer, or a wrapper of it), as set changes them: the one
// place tests build Deps, so that a new dependency is added here.
func (fx fixture) deps(q Queue, set ...func(*Deps)) Deps {
	d := Deps{Queue: q, Tasks: fx.store, Leader: fx.store, Signer: fx.keys, Dial: fx.guard.DialContext, Log: fx.log}
	for _, f := range set {
		f(&d)
	}
	return d
}

// drain has w deliver every token of partition 0 until none is left.
func (fx fixture) drain(t *testing.T, w *Workers) {
	t.Helper()
	ctx := context.Background()
	for {
		toks, err := fx.store.ReadTokens(ctx, 0, w.consumer, 16, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if len(toks) == 0 {
			return
		}
		for _, tok := range toks {
			w.Process(ctx, tok)
		}
	}
}

// oneToken reads the one token in partition 0's stream for consumer, and
// fails the test unless there is exactly one.
func (fx fixture) oneToken(t *testing.T, consumer string) outbox.Token {
	t.Helper()
	toks, err := fx.store.ReadTokens(context.Background(), 0, consumer, 10, time.Second)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %v, err %v: want one", toks, err)
	}
	return toks[0]
}

// idRecorder is a webhook that records the notification ids it receives.
type idRecorder struct {
	mu  sync.Mutex
	ids []string
}

func (r *idRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.ids = append(r.ids, req.Header.Get("A2A-Notification-Id"))
	r.mu.Unlock()
}

func (r *idRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}
