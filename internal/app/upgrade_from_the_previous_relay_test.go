package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// TestUpgradeFromThePreviousRelay runs the previous version of relay (the
// binary RELAY_UPGRADE_FROM names; scripts/upgrade-test.sh builds it from
// its commit and runs this test) on a Redis of its own, sends it tasks in
// every dialect whose webhooks fail, so that their notifications wait in
// its lanes and retry set, and stops it. This version, started on that
// Redis with the webhooks answering, must deliver every notification, in
// order per webhook, signed with the keys the previous version made, and
// serve the tasks as the previous version did. On both delivery paths.
func TestUpgradeFromThePreviousRelay(t *testing.T) {
	old := os.Getenv("RELAY_UPGRADE_FROM")
	if old == "" {
		t.Skip("RELAY_UPGRADE_FROM is not set: scripts/upgrade-test.sh builds the previous relay and runs this test")
	}
	t.Parallel()
	for _, path := range []string{"lanes", "outbox"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			testUpgradeFrom(t, old, path)
		})
	}
}

func testUpgradeFrom(t *testing.T, old, path string) {
	srv := redistest.Start(t)
	s := newSink(t)
	var failing atomic.Bool
	failing.Store(true)
	s.answer = func(string, int) (int, map[string]string, time.Duration) {
		if failing.Load() {
			return 503, nil, 0
		}
		return 200, nil, 0
	}

	// The previous relay takes tasks whose webhooks fail.
	prev := startPrevious(t, old, srv.URL())
	const perDialect = 3
	var ids []string
	for i := range perDialect {
		var v10 struct{ Task v10Task }
		prev.call("SendMessage", map[string]any{"message": v10Message("upgrade", nil), "configuration": map[string]any{
			"taskPushNotificationConfig": map[string]any{"url": s.url(fmt.Sprintf("/v10/%d", i)), "token": "tok-10",
				"authentication": map[string]any{"scheme": "Bearer", "credentials": "client-secret"}}}}, &v10)
		var v03 v03Task
		prev.call("message/send", map[string]any{"message": v03Message("upgrade", nil),
			"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": s.url(fmt.Sprintf("/v03/%d", i))}}}, &v03)
		id01 := fmt.Sprintf("upgrade-01-%d", i)
		prev.call("tasks/send", map[string]any{"id": id01, "message": v01Message("upgrade", nil),
			"pushNotification": map[string]any{"url": s.url(fmt.Sprintf("/v01/%d", i))}}, nil)
		ids = append(ids, v10.Task.ID, v03.ID, id01)
	}
	// Every task completes, and its first notification has failed at
	// least once: the notifications wait for their retries.
	before := map[string]json.RawMessage{}
	deadline := time.Now().Add(20 * time.Second)
	for i, id := range ids {
		for {
			res := prev.callRaw("tasks/get", map[string]any{"id": id})
			var task v03Task
			if res.Error == nil && json.Unmarshal(res.Result, &task) == nil && task.Status.State == "completed" {
				before[id] = res.Result
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s did not complete on the previous relay: %s", id, res.Result)
			}
			time.Sleep(20 * time.Millisecond)
		}
		dialect := []string{"v10", "v03", "v01"}[i%3]
		s.waitHits(t, fmt.Sprintf("/%s/%d", dialect, i/3), 1, 10*time.Second)
	}
	prev.stopPrevious(t)

	// This version, on the same Redis, with the webhooks answering.
	failing.Store(false)
	cfg := testConfig(t)
	cfg.RedisURL, cfg.DeliveryPath = srv.URL(), path
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.RetryInitial, cfg.RetryMaxInterval = 300*time.Millisecond, 2*time.Second
	r := startWith(t, cfg)

	want := map[string]string{
		"v10": "task,working,working,artifact,completed",
		"v03": "submitted,working,working,working,completed",
		"v01": "submitted,working,working,working,completed",
	}
	for i := range perDialect {
		for _, d := range []string{"v10", "v03", "v01"} {
			p := fmt.Sprintf("/%s/%d", d, i)
			got := delivered(t, s, p, 5, 30*time.Second)
			var seq []string
			for _, h := range got {
				if d == "v10" {
					seq = append(seq, streamKind(t, h.body))
					if h.header.Get("Authorization") != "Bearer client-secret" {
						t.Errorf("%s: Authorization = %q, want the credentials the previous relay stored", p, h.header.Get("Authorization"))
					}
					continue
				}
				var snap v03Task
				if err := json.Unmarshal(h.body, &snap); err != nil {
					t.Fatalf("%s: %s", p, h.body)
				}
				seq = append(seq, snap.Status.State)
			}
			if strings.Join(seq, ",") != want[d] {
				t.Errorf("%s: delivered %s, want %s in order", p, strings.Join(seq, ","), want[d])
			}
			if d == "v03" {
				verifyJWT(t, r, got[0], s.url(p), ids[3*i+1])
			}
		}
	}
	// The tasks read as they did.
	for id, was := range before {
		res := r.callRaw("tasks/get", map[string]any{"id": id})
		if res.Error != nil {
			t.Errorf("tasks/get %s after the upgrade: %s", id, res.Error.Message)
			continue
		}
		if !jsonEqual(t, res.Result, was) {
			t.Errorf("tasks/get %s:\n after  %s\n before %s", id, res.Result, was)
		}
	}
	// Each task lists its five deliveries (in the delivery index the
	// previous relay wrote), once each, delivered once their reports land.
	for _, id := range ids {
		for wait := time.Now().Add(10 * time.Second); ; {
			status, _, body := get(t, r.url+"/v1/deliveries?task="+id)
			var out struct{ Deliveries []struct{ ID, Status string } }
			if status != 200 || json.Unmarshal(body, &out) != nil {
				t.Fatalf("deliveries of %s: %d %s", id, status, body)
			}
			seen := map[string]bool{}
			for _, d := range out.Deliveries {
				if d.Status == "delivered" {
					seen[d.ID] = true
				}
			}
			if len(out.Deliveries) == 5 && len(seen) == 5 {
				break
			}
			if time.Now().After(wait) {
				t.Fatalf("deliveries of %s after the upgrade: %s, want 5 delivered, each once", id, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// delivered waits until path has had n distinct notifications answered
// 200, and returns the first delivery of each, in the order received.
func delivered(t *testing.T, s *sink, path string, n int, within time.Duration) []hit {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		seen := map[string]bool{}
		var out []hit
		for _, h := range s.hitsOf(path) {
			id := h.header.Get("A2A-Notification-Id")
			if h.status == 200 && !seen[id] {
				seen[id] = true
				out = append(out, h)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d notifications delivered", path, len(out), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// previous is the previous relay, running as a process of its own.
type previous struct {
	*relay
	cmd *exec.Cmd
}

func startPrevious(t *testing.T, bin, redisURL string) *previous {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log, err := os.Create(filepath.Join(t.TempDir(), "previous.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "RELAY_ADDR="+addr, "RELAY_REDIS_URL="+redisURL, "RELAY_AUTH=none", "RELAY_RATE_LIMIT=0",
		"RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8", "RELAY_DEMO_STEP_DELAY=5ms", "RELAY_RETRY_INITIAL=300ms",
		"RELAY_RETRY_MAX_INTERVAL=2s", "RELAY_DELIVERY_TIMEOUT=2s")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &previous{relay: &relay{t: t, url: "http://" + addr}, cmd: cmd}
	t.Cleanup(func() {
		if p.cmd != nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; {
		if res, err := http.Get(p.url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the previous relay did not start:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopPrevious stops the previous relay as an operator would (SIGTERM).
func (p *previous) stopPrevious(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		t.Error("the previous relay did not stop within 20 s of SIGTERM")
	}
	p.cmd = nil
}
