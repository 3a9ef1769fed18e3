package auth

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// clock is a settable clock for Keys.
type clock struct{ unix atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.unix.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(c.unix.Load(), 0) }
func (c *clock) advance(d time.Duration) { c.unix.Add(int64(d / time.Second)) }

func newKeys(t *testing.T, rdb redis.UniversalClient, cfg KeyConfig, now func() time.Time) *Keys {
	t.Helper()
	k, err := NewKeys(t.Context(), rdb, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func storedEntries(t *testing.T, rdb redis.UniversalClient, prefix string) map[string]entry {
	t.Helper()
	raw, err := rdb.HGetAll(t.Context(), prefix+":{jwks}").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]entry{}
	for kid, v := range raw {
		var e entry
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			t.Fatal(err)
		}
		out[kid] = e
	}
	return out
}

func TestConcurrentStartAgreesOnOneKey(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay"}
	const n = 20
	kids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, err := NewKeys(t.Context(), rdb, cfg, nil)
			if err != nil {
				t.Error(err)
				return
			}
			kids[i] = k.CurrentKID()
		})
	}
	wg.Wait()
	for _, kid := range kids {
		if kid != kids[0] {
			t.Fatalf("instances sign with different kids: %v", kids)
		}
	}
	cur, err := rdb.Get(t.Context(), cfg.Prefix+":{jwks}:current").Result()
	if err != nil || cur != kids[0] {
		t.Fatalf("current in Redis = %q, %v; want %q", cur, err, kids[0])
	}
	if e := storedEntries(t, rdb, cfg.Prefix); len(e) != 1 {
		t.Fatalf("%d stored keys, want 1 (losers must not store theirs)", len(e))
	}
}

// TestAlgorithmChangeRotatesOnce: instances started with another algorithm
// than the stored key's rotate to one new key, together, and keep the old
// one published for the grace.
func TestAlgorithmChangeRotatesOnce(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	clk := newClock()
	old := newKeys(t, rdb, KeyConfig{Algorithm: ES256, Prefix: prefix + "relay"}, clk.now)
	oldTok, err := old.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}

	cfg := KeyConfig{Algorithm: EdDSA, Prefix: prefix + "relay", Grace: time.Hour}
	const n = 20
	keys := make([]*Keys, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, err := NewKeys(t.Context(), rdb, cfg, clk.now)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, k := range keys {
		if k.CurrentKID() != keys[0].CurrentKID() || k.state.Load().current.alg != EdDSA {
			t.Fatalf("an instance signs with %s (%s), another with %s", k.CurrentKID(), k.state.Load().current.alg, keys[0].CurrentKID())
		}
	}
	stored := storedEntries(t, rdb, cfg.Prefix)
	if len(stored) != 2 {
		t.Fatalf("%d stored keys, want the old and one new", len(stored))
	}
	if got, want := stored[old.CurrentKID()].RetireAt, clk.now().Add(time.Hour).Unix(); got != want {
		t.Errorf("old key retireAt = %d, want %d", got, want)
	}
	if _, err := verify(t, oldTok, jwksKeyfunc(t, keys[0].JWKS()), ES256); err != nil {
		t.Errorf("token of the old key: %v", err)
	}
}

func TestRefreshSeesRotation(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay"}
	a := newKeys(t, rdb, cfg, nil)
	b := newKeys(t, rdb, cfg, nil)
	before := a.CurrentKID()
	if err := a.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	after := a.CurrentKID()
	if after == before {
		t.Fatal("Rotate kept the kid")
	}
	if b.CurrentKID() != before {
		t.Fatal("b changed key without a refresh")
	}
	if err := b.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b.CurrentKID() != after {
		t.Fatalf("b signs with %s after Refresh, want %s", b.CurrentKID(), after)
	}
	if kids := jwksKids(t, b.JWKS()); !slices.Equal(kids, []string{after, before}) {
		t.Fatalf("b's JWKS kids = %v, want [%s %s]", kids, after, before)
	}
	tok, err := b.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, tok, jwksKeyfunc(t, a.JWKS()), ES256); err != nil {
		t.Fatalf("b's token against a's JWKS: %v", err)
	}
}

func TestRotateGrace(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	clk := newClock()
	cfg := KeyConfig{Algorithm: EdDSA, Prefix: prefix + "relay", Grace: 48 * time.Hour}
	k := newKeys(t, rdb, cfg, clk.now)
	oldKid := k.CurrentKID()
	oldTok, err := k.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	newKid := k.CurrentKID()
	if kids := jwksKids(t, k.JWKS()); !slices.Equal(kids, []string{newKid, oldKid}) {
		t.Fatalf("JWKS kids after Rotate = %v, want [%s %s]", kids, newKid, oldKid)
	}
	if _, err := verify(t, oldTok, jwksKeyfunc(t, k.JWKS()), EdDSA); err != nil {
		t.Fatalf("token signed before Rotate, against the JWKS: %v", err)
	}
	if _, err := verify(t, oldTok, k.VerifyKeyFunc(), EdDSA); err != nil {
		t.Fatalf("token signed before Rotate, VerifyKeyFunc: %v", err)
	}

	clk.advance(48*time.Hour - time.Second)
	if err := k.runOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, k.JWKS()); len(kids) != 2 {
		t.Fatalf("JWKS kids a second before the grace ends = %v, want both", kids)
	}

	clk.advance(time.Second)
	if err := k.runOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, k.JWKS()); !slices.Equal(kids, []string{newKid}) {
		t.Fatalf("JWKS kids after the grace = %v, want [%s]", kids, newKid)
	}
	if _, ok := storedEntries(t, rdb, cfg.Prefix)[oldKid]; ok {
		t.Fatal("the retired key is still in Redis after the grace")
	}
	if _, err := verify(t, oldTok, k.VerifyKeyFunc(), EdDSA); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old token after the grace: err = %v, want ErrUnknownKey", err)
	}
}

// TestExpiredKeyDroppedWithoutPrune: Refresh alone (no pruning) stops
// publishing a key whose grace is over.
func TestExpiredKeyDroppedWithoutPrune(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	clk := newClock()
	cfg := KeyConfig{Prefix: prefix + "relay", Grace: time.Minute}
	k := newKeys(t, rdb, cfg, clk.now)
	if err := k.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Minute)
	if err := k.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, k.JWKS()); len(kids) != 1 {
		t.Fatalf("JWKS kids = %v, want only the current", kids)
	}
}

func TestRestartKeepsKey(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Algorithm: RS256, Prefix: prefix + "relay"}
	first := newKeys(t, rdb, cfg, nil)
	tok, err := first.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}
	second := newKeys(t, rdb, cfg, nil)
	if second.CurrentKID() != first.CurrentKID() {
		t.Fatalf("after restart kid = %s, want %s", second.CurrentKID(), first.CurrentKID())
	}
	if _, err := verify(t, tok, second.VerifyKeyFunc(), RS256); err != nil {
		t.Fatal(err)
	}
}

// TestRefreshRestoresLostKeys: if Redis loses the keys, the next Refresh
// stores this instance's key again rather than switching keys.
func TestRefreshRestoresLostKeys(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay"}
	k := newKeys(t, rdb, cfg, nil)
	kid := k.CurrentKID()
	if err := rdb.Del(t.Context(), cfg.Prefix+":{jwks}", cfg.Prefix+":{jwks}:current").Err(); err != nil {
		t.Fatal(err)
	}
	if err := k.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k.CurrentKID() != kid {
		t.Fatalf("kid after Refresh = %s, want %s", k.CurrentKID(), kid)
	}
	if again := newKeys(t, rdb, cfg, nil); again.CurrentKID() != kid {
		t.Fatalf("a new instance signs with %s, want %s", again.CurrentKID(), kid)
	}
}

// TestUnusableStoredKeySkipped: a corrupt entry that is not current does
// not stop an instance from starting or refreshing.
func TestUnusableStoredKeySkipped(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay"}
	k := newKeys(t, rdb, cfg, nil)
	if err := rdb.HSet(t.Context(), cfg.Prefix+":{jwks}", "bogus", `{"alg":"ES256","pem":"x"}`, "junk", "{").Err(); err != nil {
		t.Fatal(err)
	}
	if err := k.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, k.JWKS()); !slices.Equal(kids, []string{k.CurrentKID()}) {
		t.Fatalf("JWKS kids = %v", kids)
	}
	newKeys(t, rdb, cfg, nil)
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	for _, tt := range []struct {
		name string
		rdb  redis.UniversalClient
		cfg  KeyConfig
	}{
		{"algorithm", rdb, KeyConfig{Algorithm: "HS256", Prefix: prefix}},
		{"grace", rdb, KeyConfig{Grace: -time.Hour, Prefix: prefix}},
		{"no redis", nil, KeyConfig{}},
	} {
		if _, err := NewKeys(t.Context(), tt.rdb, tt.cfg, nil); err == nil {
			t.Errorf("%s: NewKeys succeeded", tt.name)
		}
	}
}

// TestRun: Run picks up another instance's rotation and returns when its
// context ends.
func TestRun(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay"}
	a := newKeys(t, rdb, cfg, nil)
	b := newKeys(t, rdb, cfg, nil)
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { defer close(done); b.Run(ctx, time.Millisecond) }()
	if err := a.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.CurrentKID() != a.CurrentKID() {
		if time.Now().After(deadline) {
			t.Fatal("Run did not pick up the rotation within 5s")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}

// TestSwapIsCompareAndSwap: a swap from a kid that is no longer current
// writes nothing and reports the loss.
func TestSwapIsCompareAndSwap(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	s := newStore(rdb, prefix+"relay", false)
	ctx := t.Context()
	for _, step := range []struct {
		expected, kid string
		won           bool
	}{
		{"", "a", true},  // first start
		{"", "b", false}, // a second first start loses
		{"b", "c", false},
		{"a", "d", true}, // rotation from the current key
		{"a", "e", false},
	} {
		prev := &entry{Alg: ES256, RetireAt: 99}
		won, err := s.swapTo(ctx, step.expected, prev, step.kid, entry{Alg: ES256})
		if err != nil || won != step.won {
			t.Fatalf("swap %q -> %q: won = %v, %v; want %v", step.expected, step.kid, won, err, step.won)
		}
	}
	cur, entries, _, err := s.fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur != "d" || len(entries) != 2 || entries["a"].RetireAt != 99 || entries["d"].RetireAt != 0 {
		t.Fatalf("current %q, entries %+v; want d current, a retired, nothing else", cur, entries)
	}
}

// TestSignDuringRotate signs from many goroutines while keys rotate; every
// token verifies (run with -race).
func TestSignDuringRotate(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k := newKeys(t, rdb, KeyConfig{Algorithm: EdDSA, Prefix: prefix + "relay"}, nil)
	stop := make(chan struct{})
	tokens := make(chan string, 1<<16)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				tok, err := k.Sign(sampleClaims())
				if err != nil {
					t.Error(err)
					return
				}
				select {
				case tokens <- tok:
				default:
				}
			}
		})
	}
	// Each rotation waits until more tokens were signed, so that signing
	// really overlaps the rotations however the goroutines are scheduled.
	waitMore := func() {
		seen := len(tokens)
		for deadline := time.Now().Add(10 * time.Second); len(tokens) == seen && len(tokens) < cap(tokens); {
			if time.Now().After(deadline) {
				t.Fatal("no token signed within 10s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 5 {
		waitMore()
		if err := k.Rotate(t.Context()); err != nil {
			t.Error(err)
		}
		if err := k.Refresh(t.Context()); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	close(tokens)
	keyfunc := jwksKeyfunc(t, k.JWKS())
	n := 0
	for tok := range tokens {
		if _, err := verify(t, tok, keyfunc, EdDSA); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if kids := jwksKids(t, k.JWKS()); len(kids) != 6 || n == 0 {
		t.Fatalf("JWKS has %d keys after 5 rotations (want 6); %d tokens checked", len(kids), n)
	}
}
