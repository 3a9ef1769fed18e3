package app

import (
	"fmt"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// The operator's cap per host (RELAY_WEBHOOK_HOST_MAX_CONCURRENT) holds for
// plain A2A configs, across the URLs of one host: never more in flight to
// the host than the cap, every notification delivered at its first attempt.
func TestTheOperatorsHostCapHoldsForPlainConfigs(t *testing.T) {
	t.Parallel()
	s := newLimitSink(t)
	r := deliveringRelayOn(t, "", func(c *config.Config) { c.WebhookHostMaxConcurrent = 1 })
	total := 0
	var tasks []string
	for i := range 6 {
		var res struct{ Task v10Task }
		url := s.srv.URL + []string{"/a", "/b"}[i%2] // two URLs, one host
		r.call("SendMessage", map[string]any{"message": v10Message(fmt.Sprint("host cap ", i), map[string]any{"metadata": demo(map[string]any{"steps": 1})}),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": url}}}, &res)
		tasks = append(tasks, res.Task.ID)
		total += deliveredEvents(t, r, res.Task.ID)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.arrivals)
		s.mu.Unlock()
		if n >= total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications arrived", n, total)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, id := range tasks {
		for _, d := range waitTaskRecords(t, r, id, deliveredEvents(t, r, id)) {
			if d.Attempts != 1 {
				t.Fatalf("task %s: a delivery of %d attempts", id, d.Attempts)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxFlight > 1 {
		t.Fatalf("%d notifications in flight to the host at once, over its cap of 1", s.maxFlight)
	}
}
