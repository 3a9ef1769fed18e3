package delivery

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// finishLoses loses the FinishToken of one event (a worker killed,
// or Redis unreachable, after the POST of a lane run's later head).
type finishLoses struct {
	*outbox.Consumer
	mu    sync.Mutex
	calls int
	lose  int
}

func (c *finishLoses) FinishToken(ctx context.Context, t outbox.Token, h outbox.Head, f outbox.Finish) (outbox.Finished, error) {
	c.mu.Lock()
	c.calls++
	n := c.calls
	c.mu.Unlock()
	if n == c.lose {
		return outbox.Finished{}, errors.New("killed before ack")
	}
	return c.Consumer.FinishToken(ctx, t, h, f)
}

// a lane run keeps the same token, whose stream fields (a, f) are
// the attempt number and first-attempt time of the head it was made for.
// When a run started by a retry token is interrupted on a later head, the
// reclaimed token carries the first head's attempt count to the later
// head: here, with MaxAttempts 2, the later head is dead-lettered after its
// very first failed attempt instead of being retried.
func TestReclaimedRunTokenCarriesStaleAttemptCount(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var posts []string
	fx := newFixture(t, 1, "stale", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts = append(posts, r.Header.Get("A2A-Notification-Id"))
		n := len(posts)
		mu.Unlock()
		if n == 1 || n == 4 { // head 1's first attempt and head 2's first recorded attempt fail
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "stale", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "stale", working); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Timeout: 100 * time.Millisecond, Policy: Policy{Initial: time.Millisecond, MaxAttempts: 2}}
	lease := outbox.ConsumerConfig{Attempt: cfg.Timeout, LaneLease: 300 * time.Millisecond}
	w1 := mustNew(t, fx.deps(fx.store.consumer(t, lease)), cfg)

	w1.Process(ctx, fx.oneToken(t, w1.consumer)) // head 1 fails: retry token a=2
	if n, _, err := fx.store.MoveDue(ctx, 0, time.Now().Add(time.Minute), 10); err != nil || n != 1 {
		t.Fatalf("MoveDue = %d, %v", n, err)
	}
	retry := fx.oneToken(t, w1.consumer)
	if retry.Attempt != 2 {
		t.Fatalf("retry token %+v, want attempt 2", retry)
	}
	lossy := &finishLoses{Consumer: fx.store.consumer(t, lease), lose: 2}
	w2 := mustNew(t, fx.deps(lossy), cfg)
	w2.Process(ctx, retry) // head 1 delivered, run goes on; head 2 POSTed, its finish lost
	mu.Lock()
	if len(posts) != 3 {
		t.Fatalf("posts %v: want 3 (head 1 twice, head 2 once)", posts)
	}
	head2 := posts[2]
	mu.Unlock()

	time.Sleep(350 * time.Millisecond)
	again, err := fx.store.Reclaim(ctx, 0, w1.consumer, lease.LaneLease, 10)
	if err != nil || len(again) != 1 {
		t.Fatalf("reclaimed %v, %v", again, err)
	}
	t.Logf("reclaimed token for head 2: Attempt=%d First=%v", again[0].Attempt, again[0].First)
	w1.Process(ctx, again[0]) // head 2 again: 500
	rec, err := fx.store.Delivery(ctx, head2)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != "failed" {
		t.Fatalf("head 2 after one recorded failed attempt: status %q (attempts %d), want failed (a retry): "+
			"the reclaimed run token carried head 1's attempt number", rec.Status, rec.Attempts)
	}
}

// the notification JWT the workers
// send verifies with golang-jwt, strictly, and its header is base64url
// without padding with alg, kid and typ.
func TestNotificationJWTVerifies(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var tok, url string
	fx := newFixture(t, 1, "jwt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tok, url = r.Header.Get("A2A-Notification-JWT"), "http://"+r.Host+r.URL.Path
		mu.Unlock()
	}))
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Issuer: "https://relay.example"})
	w.Process(ctx, fx.oneToken(t, w.consumer))
	mu.Lock()
	defer mu.Unlock()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || strings.ContainsAny(tok, "=+/") {
		t.Fatalf("token %q", tok)
	}
	hdr, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(hdr, &h); err != nil || h["typ"] != "JWT" || h["kid"] != fx.keys.CurrentKID() || h["alg"] == "" {
		t.Fatalf("header %s, %v", hdr, err)
	}
	got, err := jwt.Parse(tok, fx.keys.VerifyKeyFunc(), jwt.WithAudience(url), jwt.WithIssuer("https://relay.example"),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithValidMethods([]string{h["alg"].(string)}))
	if err != nil || !got.Valid {
		t.Fatalf("verify: %v (header %s)", err, hdr)
	}
	mc := got.Claims.(jwt.MapClaims)
	if mc["jti"] == "" || mc["taskId"] != "jwt" || len(mc["request_body_sha256"].(string)) != 64 {
		t.Fatalf("claims %v", mc)
	}
}
