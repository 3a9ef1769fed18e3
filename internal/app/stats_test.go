package app

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// The per-minute outcome counts behind the operator's chart move with
// deliveries: a 500 is a failed attempt, the retry that lands is delivered.
func TestDeliveryStatsPerMinute(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		c.RetryInitial, c.RetryMaxInterval = 50*time.Millisecond, 100*time.Millisecond
	})
	hook := newSink(t)
	hook.answer = func(_ string, n int) (int, map[string]string, time.Duration) {
		if n == 0 {
			return 500, nil, 0
		}
		return 204, nil, 0
	}
	r.call("SendMessage", map[string]any{"message": v10Message("count me", map[string]any{"metadata": demo(map[string]any{"steps": 1})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.url("/stats")}}}, nil)
	hook.waitHits(t, "/stats", 5, 10*time.Second) // 500, then the task, working, completed (+ artifact)
	var got struct {
		Minutes []struct {
			Minute                  time.Time
			Delivered, Failed, Dead int
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, body := get(t, r.url+"/v1/stats/deliveries?minutes=5")
		if err := json.Unmarshal(body, &got); err != nil || len(got.Minutes) != 5 {
			t.Fatalf("stats: %s", body)
		}
		delivered, failed := 0, 0
		for _, m := range got.Minutes {
			delivered, failed = delivered+m.Delivered, failed+m.Failed
		}
		if failed == 1 && delivered >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats count %d delivered, %d failed; want >= 4 and 1", delivered, failed)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !got.Minutes[0].Minute.Before(got.Minutes[4].Minute) {
		t.Fatal("minutes are not oldest first")
	}
	if st, _, _ := get(t, r.url+"/v1/stats/deliveries?minutes=0"); st != 400 {
		t.Fatalf("minutes=0: %d", st)
	}
}
