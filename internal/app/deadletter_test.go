package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// deliveries lists /v1/deliveries with a query.
func listDeliveries(t *testing.T, r *relay, query string) []struct {
	ID, TaskID, ConfigID, Status string
	Attempts                     int
} {
	t.Helper()
	status, _, body := get(t, r.url+"/v1/deliveries?"+query)
	if status != 200 {
		t.Fatalf("list %s: %d %s", query, status, body)
	}
	var out struct {
		Deliveries []struct {
			ID, TaskID, ConfigID, Status string
			Attempts                     int
		}
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Deliveries
}

func postJSON(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, b.String()
}

func TestDeadLettersRedriveAndRedeliver(t *testing.T) {
	eachPath(t, testDeadLettersRedriveAndRedeliver)
}

func testDeadLettersRedriveAndRedeliver(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	var healthy atomic.Bool
	s.answer = func(string, int) (int, map[string]string, time.Duration) {
		if healthy.Load() {
			return 200, nil, 0
		}
		return 500, nil, 0
	}
	r := deliveringRelayOn(t, path, func(c *config.Config) {
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 50*time.Millisecond, 100*time.Millisecond, 2
	})
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("dead", map[string]any{"metadata": demo(map[string]any{"outcome": "rejected"})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "h", "url": s.url("/dead")}}}, &res)
	// Two notifications (task, rejected), two attempts each, then dead letters.
	s.waitHits(t, "/dead", 4, 10*time.Second)
	var dead []struct {
		ID, TaskID, ConfigID, Status string
		Attempts                     int
	}
	for range 100 {
		if dead = listDeliveries(t, r, "status=dead"); len(dead) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(dead) != 2 || dead[0].Attempts != 2 || dead[0].TaskID != res.Task.ID || dead[0].ConfigID != "h" {
		t.Fatalf("dead letters %+v", dead)
	}
	if byTask := listDeliveries(t, r, "task="+res.Task.ID+"&config=h"); len(byTask) != 2 {
		t.Fatalf("by task and config: %+v", byTask)
	}
	if status, _, body := get(t, r.url+"/v1/deliveries?status=delivered"); status != 400 || !strings.Contains(string(body), "task=") {
		t.Fatalf("delivered without a task: %d %s", status, body)
	}
	if status, _, _ := get(t, r.url+"/v1/deliveries/0.nope"); status != 404 {
		t.Fatalf("unknown delivery: %d", status)
	}

	healthy.Store(true)
	status, body := postJSON(t, r.url+"/v1/deliveries/redrive")
	if status != http.StatusAccepted || !strings.Contains(body, `"redriven":2`) {
		t.Fatalf("redrive: %d %s", status, body)
	}
	hits := s.waitHits(t, "/dead", 6, 10*time.Second)
	if hits[4].header.Get("A2A-Notification-Id") != dead[1].ID && hits[4].header.Get("A2A-Notification-Id") != dead[0].ID {
		t.Fatalf("redriven notification has a new id")
	}
	for _, d := range dead {
		var rec struct{ Status string }
		waitDelivered(t, r, d.ID, &rec)
	}
	if left := listDeliveries(t, r, "status=dead"); len(left) != 0 {
		t.Fatalf("dead letters after redrive: %+v", left)
	}
	// An operator redelivers a delivered notification: it lands again, same id.
	if status, _ := postJSON(t, r.url+"/v1/deliveries/"+dead[0].ID+"/redeliver"); status != http.StatusAccepted {
		t.Fatalf("redeliver: %d", status)
	}
	again := s.waitHits(t, "/dead", 7, 10*time.Second)
	if again[6].header.Get("A2A-Notification-Id") != dead[0].ID {
		t.Fatalf("redelivery id %q, want %q", again[6].header.Get("A2A-Notification-Id"), dead[0].ID)
	}
	if status, _ := postJSON(t, r.url+"/v1/deliveries/0.nope/redeliver"); status != 404 {
		t.Fatalf("redeliver unknown: %d", status)
	}
}

// A dead letter an operator redelivered (and that landed) is not sent again
// by a later redrive, and is not counted.
func TestRedriveSkipsRedeliveredDeadLetters(t *testing.T) {
	eachPath(t, testRedriveSkipsRedeliveredDeadLetters)
}

func testRedriveSkipsRedeliveredDeadLetters(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	var healthy atomic.Bool
	s.answer = func(string, int) (int, map[string]string, time.Duration) {
		if healthy.Load() {
			return 200, nil, 0
		}
		return 500, nil, 0
	}
	r := deliveringRelayOn(t, path, func(c *config.Config) {
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 50*time.Millisecond, 100*time.Millisecond, 1
	})
	r.call("SendMessage", map[string]any{"message": v10Message("once", map[string]any{"metadata": demo(map[string]any{"outcome": "rejected"})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": s.url("/once")}}}, nil)
	var dead []struct {
		ID, TaskID, ConfigID, Status string
		Attempts                     int
	}
	for range 200 {
		if dead = listDeliveries(t, r, "status=dead"); len(dead) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(dead) != 2 {
		t.Fatalf("dead letters %+v", dead)
	}
	healthy.Store(true)
	if status, _ := postJSON(t, r.url+"/v1/deliveries/"+dead[0].ID+"/redeliver"); status != http.StatusAccepted {
		t.Fatalf("redeliver: %d", status)
	}
	var rec struct{ Status string }
	waitDelivered(t, r, dead[0].ID, &rec)
	status, body := postJSON(t, r.url+"/v1/deliveries/redrive")
	if status != http.StatusAccepted || !strings.Contains(body, `"redriven":1`) {
		t.Fatalf("redrive: %d %s (want only the one still dead)", status, body)
	}
	waitDelivered(t, r, dead[1].ID, &rec)
	time.Sleep(200 * time.Millisecond)
	n := 0
	for _, h := range s.hitsOf("/once") {
		if h.header.Get("A2A-Notification-Id") == dead[0].ID && h.status == 200 {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the redelivered notification landed %d times, want once", n)
	}
}
