package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// consumerAt is a consumer of d's parts (nil: none, for the decisions that
// ask no Redis) whose clock reads *now.
func consumerAt(t *testing.T, d *ConsumerDeps, cfg ConsumerConfig, now *time.Time) *Consumer {
	t.Helper()
	cfg.Name = "w1"
	cfg.Now = func() time.Time { return *now }
	if d == nil {
		d = noParts()
	}
	c, err := NewConsumer(*d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The leases and the cadence of the loops that keep them, as the consumer
// decides them: a change here changes how relays hand work over.
func TestConsumerTiming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  ConsumerConfig
		want Timing
	}{
		{ConsumerConfig{}, Timing{Attempt: 10 * time.Second, LaneLease: 15 * time.Second, OwnLease: 10 * time.Second,
			Reclaim: 7500 * time.Millisecond, Look: 10 * time.Second / 3, Renew: 2 * time.Second}},
		{ConsumerConfig{Attempt: 30 * time.Second}, Timing{Attempt: 30 * time.Second, LaneLease: 35 * time.Second, OwnLease: 10 * time.Second,
			Reclaim: 17500 * time.Millisecond, Look: 10 * time.Second / 3, Renew: 2 * time.Second}},
		{ConsumerConfig{LaneLease: time.Minute, OwnLease: 30 * time.Second}, Timing{Attempt: 10 * time.Second, LaneLease: time.Minute, OwnLease: 30 * time.Second,
			Reclaim: 30 * time.Second, Look: 10 * time.Second, Renew: 6 * time.Second}},
	} {
		var now time.Time
		if got := consumerAt(t, nil, tc.cfg, &now).Timing(); got != tc.want {
			t.Errorf("Timing of %+v = %+v, want %+v", tc.cfg, got, tc.want)
		}
	}
}

// noParts is a consumer's parts over no Redis, for the decisions that ask
// none.
func noParts() *ConsumerDeps {
	return &ConsumerDeps{Outboxes: &Outboxes{}, Lanes: &Lanes{}, Owners: &Owners{}, Stats: &Stats{}, Records: &Records{}}
}

// NewConsumer refuses a missing part or name and negative durations,
// naming them.
func TestNewConsumerNamesWhatIsWrong(t *testing.T) {
	t.Parallel()
	without := func(drop func(*ConsumerDeps)) ConsumerDeps {
		d := noParts()
		drop(d)
		return *d
	}
	for _, tc := range []struct {
		d    ConsumerDeps
		cfg  ConsumerConfig
		want string
	}{
		{without(func(d *ConsumerDeps) { d.Outboxes = nil }), ConsumerConfig{Name: "w1"}, "ConsumerDeps.Outboxes"},
		{without(func(d *ConsumerDeps) { d.Lanes = nil }), ConsumerConfig{Name: "w1"}, "ConsumerDeps.Lanes"},
		{without(func(d *ConsumerDeps) { d.Owners = nil }), ConsumerConfig{Name: "w1"}, "ConsumerDeps.Owners"},
		{without(func(d *ConsumerDeps) { d.Stats = nil }), ConsumerConfig{Name: "w1"}, "ConsumerDeps.Stats"},
		{without(func(d *ConsumerDeps) { d.Records = nil }), ConsumerConfig{Name: "w1"}, "ConsumerDeps.Records"},
		{*noParts(), ConsumerConfig{}, "ConsumerConfig.Name"},
		{*noParts(), ConsumerConfig{Name: "w1", Attempt: -1}, "ConsumerConfig.Attempt"},
		{*noParts(), ConsumerConfig{Name: "w1", LaneLease: -1}, "ConsumerConfig.LaneLease"},
		{*noParts(), ConsumerConfig{Name: "w1", OwnLease: -1}, "ConsumerConfig.OwnLease"},
	} {
		if _, err := NewConsumer(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewConsumer(%s wrong) = %v, want an error naming it", tc.want, err)
		}
	}
}

// The lane lease's decisions, on the consumer's clock (LaneLease 60s,
// Attempt 10s): a token read less than half a lease ago is fresh; an
// attempt starts only while min(Attempt, half a lease) of the lease is
// left; a run step re-claims its token once its last claim is a quarter of
// a lease ago.
func TestConsumerLaneLeaseDecisions(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	now := t0
	c := consumerAt(t, nil, ConsumerConfig{LaneLease: time.Minute, Attempt: 10 * time.Second}, &now)

	read := Token{Read: t0}
	for _, tc := range []struct {
		tok   Token
		began time.Duration
		want  bool
	}{
		{read, 30*time.Second - 1, true},
		{read, 30 * time.Second, false},
		{Token{Read: t0, Reclaimed: true}, 0, false}, // another consumer's read
		{Token{}, 0, false},                          // read by no one here
	} {
		if got := c.fresh(tc.tok, t0.Add(tc.began)); got != tc.want {
			t.Errorf("fresh(%+v, begun %s after the read) = %v, want %v", tc.tok, tc.began, got, tc.want)
		}
	}

	h := Head{held: t0}
	for _, tc := range []struct {
		after time.Duration
		want  bool
	}{{0, true}, {50 * time.Second, true}, {50*time.Second + 1, false}} {
		now = t0.Add(tc.after)
		if got := c.CanAttempt(h); got != tc.want {
			t.Errorf("CanAttempt %s into the lease = %v, want %v", tc.after, got, tc.want)
		}
	}
	if !c.CanAttempt(Head{}) {
		t.Error("CanAttempt(a head under no lane lease) = false")
	}
	short := consumerAt(t, nil, ConsumerConfig{LaneLease: time.Minute, Attempt: 2 * time.Minute}, &now)
	now = t0.Add(30*time.Second + 1) // an attempt longer than the lease needs half of it left
	if short.CanAttempt(h) {
		t.Error("CanAttempt past half a lease shorter than an attempt = true")
	}

	for _, tc := range []struct {
		run   bool
		since time.Duration
		want  bool
	}{{true, 15*time.Second - 1, false}, {true, 15 * time.Second, true}, {false, time.Hour, false}} {
		if got := c.claim(tc.run, t0, t0.Add(tc.since)); got != tc.want {
			t.Errorf("claim(run %v, %s after the last claim) = %v, want %v", tc.run, tc.since, got, tc.want)
		}
	}
}

// Through Redis, on an injected clock: a token read and begun within half
// a lease is begun fresh (its read is its last claim), under a lane lease
// of LaneLease; a lane run's steps renew the lease from the step, and
// re-claim the token a quarter of a lease after its last claim; an outbox
// is owned for OwnLease.
func TestConsumerKeepsLeasesOnItsClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 3)
	t0 := time.Unix(1_000_000, 0)
	now := t0
	c := consumerAt(t, s.consumerDeps(), ConsumerConfig{LaneLease: time.Minute, OwnLease: 20 * time.Second}, &now)

	ts, err := c.ReadTokens(ctx, 0, 10, 10*time.Millisecond)
	if err != nil || len(ts) != 1 || !ts[0].Read.Equal(t0) {
		t.Fatalf("ReadTokens = %+v, %v; want one token read at %v", ts, err, t0)
	}
	now = t0.Add(29 * time.Second)
	var h Head
	var st int
	leaseFor(t, s.rdb, s.k.Lease("run", "c1"), time.Minute, "lane lease after Begin", func() {
		h, st, err = c.Begin(ctx, ts[0])
	})
	if err != nil || st != Go || !h.held.Equal(now) || !h.claimed.Equal(t0) {
		t.Fatalf("Begin = held %v claimed %v, %v, %v; want Go, held from now, claimed at the read", h.held, h.claimed, st, err)
	}

	// 44s after the last claim (the read): the step re-claims.
	now = t0.Add(44 * time.Second)
	done, err := c.FinishToken(ctx, ts[0], h, Finish{Outcome: Delivered, Attempt: []byte(`{}`), Now: now, First: now, Run: true})
	if err != nil || !done.Run || done.Next.EventID != ids[1] || !done.Next.held.Equal(now) || !done.Next.claimed.Equal(now) {
		t.Fatalf("FinishToken(run) = %+v (held %v, claimed %v), %v; want the next head, held and claimed now",
			done, done.Next.held, done.Next.claimed, err)
	}
	// 10s later: under a quarter lease since that claim, not re-claimed.
	claimed := now
	now = now.Add(10 * time.Second)
	leaseFor(t, s.rdb, s.k.Lease("run", "c1"), time.Minute, "lane lease after a run step", func() {
		done, err = c.FinishToken(ctx, ts[0], done.Next, Finish{Outcome: Delivered, Attempt: []byte(`{}`), Now: now, First: now, Run: true})
	})
	if err != nil || !done.Run || done.Next.EventID != ids[2] || !done.Next.held.Equal(now) || !done.Next.claimed.Equal(claimed) {
		t.Fatalf("FinishToken(run) = %+v (held %v, claimed %v), %v; want the last head, held now, claimed %v",
			done, done.Next.held, done.Next.claimed, err, claimed)
	}

	var ok bool
	leaseFor(t, s.rdb, s.k.OutboxOwner(0), 20*time.Second, "outbox lease after Own", func() { _, ok, err = c.Own(ctx, 0) })
	if err != nil || !ok {
		t.Fatalf("Own = %v, %v", ok, err)
	}
}

// leaseFor checks that call sets key to expire lease after the moment it
// ran: its expiry (PEXPIRETIME, on Redis's clock) is lease after a time
// between Redis's clock read before call and after it, however long call
// took.
func leaseFor(t *testing.T, rdb redis.UniversalClient, key string, lease time.Duration, what string, call func()) {
	t.Helper()
	ctx := context.Background()
	before := rdb.Time(ctx).Val().Truncate(time.Millisecond)
	call()
	after := rdb.Time(ctx).Val()
	at, err := rdb.PExpireTime(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if exp := time.UnixMilli(at.Milliseconds()); exp.Before(before.Add(lease)) || exp.After(after.Add(lease)) {
		t.Fatalf("%s: %s expires at %v, want %s after a moment between %v and %v", what, key, exp, lease, before, after)
	}
}
