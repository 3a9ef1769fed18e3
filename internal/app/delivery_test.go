package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// deliveringRelay is a relay that may POST to loopback, with fast retries.
func deliveringRelay(t *testing.T, mut func(*config.Config)) *relay {
	return deliveringRelayOn(t, "", mut)
}

// deliveringRelayOn is deliveringRelay with notifications on delivery
// path path (RELAY_DELIVERY_PATH).
func deliveringRelayOn(t *testing.T, path string, mut func(*config.Config)) *relay {
	return startRelayOn(t, path, func(c *config.Config) {
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		c.RetryInitial, c.RetryMaxInterval = 300*time.Millisecond, 5*time.Second
		c.DeliveryTimeout = 2 * time.Second
		if mut != nil {
			mut(c)
		}
	})
}

// streamKinds names each v1.0 StreamResponse body: task, working, artifact, completed…
func streamKind(t *testing.T, body []byte) string {
	var sr struct {
		Task           *v10Task
		StatusUpdate   *struct{ Status struct{ State string } }
		ArtifactUpdate *struct{}
	}
	if err := json.Unmarshal(body, &sr); err != nil {
		t.Fatalf("notification %s: %v", body, err)
	}
	switch {
	case sr.Task != nil:
		return "task"
	case sr.StatusUpdate != nil:
		return strings.ToLower(strings.TrimPrefix(sr.StatusUpdate.Status.State, "TASK_STATE_"))
	case sr.ArtifactUpdate != nil:
		return "artifact"
	}
	t.Fatalf("notification is no StreamResponse: %s", body)
	return ""
}

func TestDeliverySignedInOrderEachDialect(t *testing.T) {
	eachPath(t, testDeliverySignedInOrderEachDialect)
}

func testDeliverySignedInOrderEachDialect(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelayOn(t, path, nil)

	var v10 struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("deliver me", nil), "configuration": map[string]any{
		"taskPushNotificationConfig": map[string]any{"url": s.url("/v10"), "token": "tok-10",
			"authentication": map[string]any{"scheme": "Bearer", "credentials": "client-secret"}}}}, &v10)
	hits := s.waitHits(t, "/v10", 5, 10*time.Second)
	var kinds []string
	ids := map[string]bool{}
	for _, h := range hits {
		kinds = append(kinds, streamKind(t, h.body))
		if h.header.Get("Content-Type") != "application/a2a+json" || h.header.Get("A2A-Version") != "1.0" {
			t.Fatalf("headers %v", h.header)
		}
		if h.header.Get("Authorization") != "Bearer client-secret" {
			t.Fatalf("Authorization = %q, want the configured credentials exactly", h.header.Get("Authorization"))
		}
		if h.header.Get("X-A2A-Notification-Token") != "tok-10" || h.header.Get("A2A-Notification-Token") != "tok-10" {
			t.Fatalf("token headers %v", h.header)
		}
		if !strings.HasPrefix(h.header.Get("User-Agent"), "relay/") {
			t.Fatalf("User-Agent %q", h.header.Get("User-Agent"))
		}
		ids[h.header.Get("A2A-Notification-Id")] = true
		verifyJWT(t, r, h, s.url("/v10"), v10.Task.ID)
	}
	if got := strings.Join(kinds, ","); got != "task,working,working,artifact,completed" {
		t.Fatalf("v1.0 notifications in order %s", got)
	}
	if len(ids) != 5 {
		t.Fatalf("notification ids not unique: %v", ids)
	}

	var v03 v03Task
	r.call("message/send", map[string]any{"message": v03Message("three", nil),
		"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": s.url("/v03")}}}, &v03)
	var states []string
	for _, h := range s.waitHits(t, "/v03", 5, 10*time.Second) {
		var snap v03Task
		if err := json.Unmarshal(h.body, &snap); err != nil || snap.Kind != "task" || snap.ID != v03.ID {
			t.Fatalf("v0.3 notification %s", h.body)
		}
		states = append(states, snap.Status.State)
		if !strings.HasPrefix(h.header.Get("Authorization"), "Bearer ey") {
			t.Fatalf("without credentials Authorization carries the JWT: %q", h.header.Get("Authorization"))
		}
		verifyJWT(t, r, h, s.url("/v03"), v03.ID)
	}
	if got := strings.Join(states, ","); got != "submitted,working,working,working,completed" {
		t.Fatalf("v0.3 snapshots in order: %s", got)
	}

	r.call("tasks/send", map[string]any{"id": "deliver-01", "message": v01Message("one", nil),
		"pushNotification": map[string]any{"url": s.url("/v01")}}, nil)
	last := s.waitHits(t, "/v01", 5, 10*time.Second)[4]
	var snap v01Task
	if err := json.Unmarshal(last.body, &snap); err != nil || snap.ID != "deliver-01" || snap.Status.State != "completed" || snap.SessionID == "" {
		t.Fatalf("v0.1 notification %s", last.body)
	}
}

// verifyJWT checks a notification's JWT as a receiver would.
func verifyJWT(t *testing.T, r *relay, h hit, aud, taskID string) {
	t.Helper()
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(h.header.Get("A2A-Notification-JWT"), claims, jwksKeyfunc(t, r),
		jwt.WithAudience(aud), jwt.WithIssuer(r.app.cfg.PublicURL), jwt.WithExpirationRequired(), jwt.WithValidMethods([]string{"ES256"}))
	if err != nil {
		t.Fatalf("JWT does not verify: %v", err)
	}
	sum := sha256.Sum256(h.body)
	if claims["request_body_sha256"] != hex.EncodeToString(sum[:]) || claims["taskId"] != taskID ||
		claims["jti"] != h.header.Get("A2A-Notification-Id") {
		t.Fatalf("claims %v", claims)
	}
}

func TestRetriesWithGrowingGapsThenSuccess(t *testing.T) {
	eachPath(t, testRetriesWithGrowingGapsThenSuccess)
}

func testRetriesWithGrowingGapsThenSuccess(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	s.answer = func(_ string, n int) (int, map[string]string, time.Duration) {
		if n < 2 {
			return 500, nil, 0
		}
		return 200, nil, 0
	}
	r := deliveringRelayOn(t, path, nil)
	var res struct{ Task v10Task }
	// Only the task event: outcome rejected with no steps makes two events; take the first lane entry.
	r.call("SendMessage", map[string]any{"message": v10Message("retry", map[string]any{"metadata": demo(map[string]any{"outcome": "rejected"})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": s.url("/flaky")}}}, &res)
	hits := s.waitHits(t, "/flaky", 4, 15*time.Second)
	id := hits[0].header.Get("A2A-Notification-Id")
	for i := 1; i < 3; i++ {
		if hits[i].header.Get("A2A-Notification-Id") != id {
			t.Fatalf("retry %d has another notification id", i)
		}
	}
	if streamKind(t, hits[3].body) != "rejected" {
		t.Fatal("the next notification came before the retried one succeeded")
	}
	// The backoff doubles from 300ms, ±20%: at least 240ms, then 480ms
	// (less a little: a retry is due from when its attempt was taken up,
	// just before the webhook saw it). Lower bounds only, which a slow
	// machine cannot break (it only lengthens the gaps); a backoff that
	// did not grow would keep the second gap under 360ms (and the ~40ms a
	// retry takes to be picked up).
	gap1, gap2 := hits[1].at.Sub(hits[0].at), hits[2].at.Sub(hits[1].at)
	if gap1 < 200*time.Millisecond || gap2 < 450*time.Millisecond {
		t.Fatalf("gaps %s then %s: want exponential growth from 300ms (±20%%)", gap1, gap2)
	}
	// The attempt log has all three attempts of that notification.
	var d struct {
		Status     string
		Attempts   int
		AttemptLog []struct {
			Attempt    int
			Status     int
			ErrorClass string
			Outcome    string
			Response   string
		}
	}
	waitDelivered(t, r, id, &d)
	if d.Attempts != 3 || d.AttemptLog[0].Status != 500 || d.AttemptLog[0].ErrorClass != "http" || d.AttemptLog[0].Outcome != "retry" ||
		d.AttemptLog[2].Outcome != "delivered" || d.AttemptLog[0].Response != "answer 500" {
		t.Fatalf("delivery record %+v", d)
	}
}

// waitDelivered polls the management API until the delivery is delivered.
func waitDelivered(t *testing.T, r *relay, id string, out any) {
	t.Helper()
	for range 200 {
		_, _, body := get(t, r.url+"/v1/deliveries/"+id)
		var st struct{ Status string }
		_ = json.Unmarshal(body, &st)
		if st.Status == "delivered" {
			if err := json.Unmarshal(body, out); err != nil {
				t.Fatal(err)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("delivery %s never delivered", id)
}

func TestGoneDisablesConfigAndRetryAfter(t *testing.T) {
	eachPath(t, testGoneDisablesConfigAndRetryAfter)
}

func testGoneDisablesConfigAndRetryAfter(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	s.answer = func(path string, n int) (int, map[string]string, time.Duration) {
		switch {
		case path == "/gone":
			return 410, nil, 0
		case path == "/busy" && n == 0:
			return 429, map[string]string{"Retry-After": "2"}, 0
		}
		return 200, nil, 0
	}
	r := deliveringRelayOn(t, path, nil)
	var res struct{ Task v10Task }
	// A task long enough that config "b", added after the send, sees several events.
	r.call("SendMessage", map[string]any{"message": v10Message("gone", map[string]any{"metadata": demo(map[string]any{"steps": 5, "delayMs": 100})}),
		"configuration": map[string]any{"returnImmediately": true,
			"taskPushNotificationConfig": map[string]any{"id": "g", "url": s.url("/gone")}}}, &res)
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": res.Task.ID, "id": "b", "url": s.url("/busy")}, nil)
	s.waitHits(t, "/busy", 1, 10*time.Second)
	for range 100 { // while /busy waits out its Retry-After, its delivery is listed as failed across tasks
		if d := listDeliveries(t, r, "status=failed"); len(d) > 0 && d[0].ConfigID == "b" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The next events queue behind the failed head (Retry-After: 2) as pending.
	for i := 0; len(listDeliveries(t, r, "status=pending&config=b")) == 0; i++ {
		if i == 75 {
			t.Fatal("notifications queued behind the failed one are not listed as pending")
		}
		time.Sleep(20 * time.Millisecond)
	}
	busy := s.waitHits(t, "/busy", 2, 10*time.Second)
	if gap := busy[1].at.Sub(busy[0].at); gap < 1900*time.Millisecond {
		t.Fatalf("Retry-After: 2 honoured after only %s", gap)
	}
	pollUntil(t, r, res.Task.ID, "TASK_STATE_COMPLETED")
	time.Sleep(300 * time.Millisecond)
	if n := len(s.hitsOf("/gone")); n != 1 {
		t.Fatalf("410 webhook got %d requests, want 1", n)
	}
	wantError(t, r.callRaw("GetTaskPushNotificationConfig", map[string]any{"taskId": res.Task.ID, "id": "g"}), -32001)
	_, _, body := get(t, r.url+"/v1/deliveries?task="+res.Task.ID+"&status=disabled")
	if !strings.Contains(string(body), `"status":"disabled"`) {
		t.Fatalf("disabled delivery not listed: %s", body)
	}
}

func TestSlowWebhookDoesNotDelayOthers(t *testing.T) { eachPath(t, testSlowWebhookDoesNotDelayOthers) }

func testSlowWebhookDoesNotDelayOthers(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	s.answer = func(path string, _ int) (int, map[string]string, time.Duration) {
		if path == "/slow" {
			return 200, nil, 1500 * time.Millisecond
		}
		return 200, nil, 0
	}
	r := deliveringRelayOn(t, path, func(c *config.Config) { c.DeliveryWorkers = 4 })
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("race", map[string]any{"metadata": demo(map[string]any{"steps": 3, "delayMs": 100})}),
		"configuration": map[string]any{"returnImmediately": true,
			"taskPushNotificationConfig": map[string]any{"id": "slow", "url": s.url("/slow")}}}, &res)
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": res.Task.ID, "id": "fast", "url": s.url("/fast")}, nil)
	fast := s.waitHits(t, "/fast", 4, 10*time.Second)
	slow := s.waitHits(t, "/slow", 2, 10*time.Second)
	// The slow lane's second POST cannot start before its first one ended
	// (1.5s); the fast lane must not have waited for it.
	if !fast[3].at.Before(slow[1].at) {
		t.Fatalf("fast webhook's 4th notification at %s, after the slow one's 2nd at %s", fast[3].at, slow[1].at)
	}
}

func TestLoopbackRefusedWithoutAllowlist(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := startRelay(t, nil) // no RELAY_WEBHOOK_ALLOW_CIDRS
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("ssrf", nil)}, &res)
	for _, u := range []string{s.url("/x"), "http://localhost:9/x", "http://[::1]:9/x", "http://0x7f000001/x", "http://[::ffff:127.0.0.1]/x"} {
		res := r.callRaw("CreateTaskPushNotificationConfig", map[string]any{"taskId": res.Task.ID, "url": u})
		wantError(t, res, -32602)
		if !strings.Contains(res.Error.Message, "refused") {
			t.Fatalf("%s: message %q", u, res.Error.Message)
		}
	}
	allowed := deliveringRelay(t, nil)
	allowed.call("SendMessage", map[string]any{"message": v10Message("ok", nil), "configuration": map[string]any{
		"taskPushNotificationConfig": map[string]any{"url": s.url("/allowed")}}}, nil)
	s.waitHits(t, "/allowed", 5, 10*time.Second)
	if len(s.hitsOf("/x")) != 0 {
		t.Fatal("refused URL was posted to")
	}
}

func TestBacklogSurvivesRestart(t *testing.T) { eachPath(t, testBacklogSurvivesRestart) }

func testBacklogSurvivesRestart(t *testing.T, path string) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	s := newSink(t)
	var down atomic.Bool
	down.Store(true)
	s.answer = func(string, int) (int, map[string]string, time.Duration) {
		if down.Load() {
			return 503, nil, 0
		}
		return 200, nil, 0
	}
	cfg := testConfig(t)
	cfg.DeliveryPath = path
	cfg.RedisURL = srv.URL()
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.RetryInitial, cfg.RetryMaxInterval = 200*time.Millisecond, 500*time.Millisecond
	r1 := startWith(t, cfg)
	const tasks = 10
	for i := range tasks {
		r1.call("SendMessage", map[string]any{"message": v10Message(fmt.Sprint("backlog", i), nil), "configuration": map[string]any{
			"taskPushNotificationConfig": map[string]any{"url": s.url(fmt.Sprint("/t", i))}}}, nil)
	}
	r1.stop()
	srv.Restart()
	down.Store(false)
	startWith(t, cfg)
	// Every task's five notifications landed with a 200, in order.
	for i := range tasks {
		path := fmt.Sprint("/t", i)
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok := s.delivered(t, path)
			if strings.Join(ok, ",") == "task,working,working,artifact,completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s delivered %v", path, ok)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestKeyRotationKeepsOldTokensVerifiable(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	r.call("SendMessage", map[string]any{"message": v10Message("before", map[string]any{"metadata": demo(map[string]any{"outcome": "rejected"})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": s.url("/rot")}}}, nil)
	before := s.waitHits(t, "/rot", 2, 10*time.Second)[0]
	status, body := postJSON(t, r.url+"/v1/keys/rotate")
	if status != 200 || !strings.Contains(body, `"kid"`) {
		t.Fatalf("rotate: %d %s", status, body)
	}
	r.call("SendMessage", map[string]any{"message": v10Message("after", map[string]any{"metadata": demo(map[string]any{"outcome": "rejected"})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": s.url("/rot")}}}, nil)
	after := s.waitHits(t, "/rot", 4, 10*time.Second)[3]
	kid := func(h hit) any {
		tok, _, err := jwt.NewParser().ParseUnverified(h.header.Get("A2A-Notification-JWT"), jwt.MapClaims{})
		if err != nil {
			t.Fatal(err)
		}
		return tok.Header["kid"]
	}
	if kid(before) == kid(after) {
		t.Fatal("the key did not change")
	}
	keyfunc := jwksKeyfunc(t, r) // the JWKS now holds both keys
	for _, h := range []hit{before, after} {
		if _, err := jwt.Parse(h.header.Get("A2A-Notification-JWT"), keyfunc, jwt.WithoutClaimsValidation()); err != nil {
			t.Fatalf("token of kid %v does not verify after rotation: %v", kid(h), err)
		}
	}
}
