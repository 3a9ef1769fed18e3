package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// With webhook validation on, a host gets no notification until it echoes
// the validation token; the failed checks are attempts (class validation)
// that are retried; once validated, the host is not asked again.
func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	var echo atomic.Bool
	var mu sync.Mutex
	var gets, posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodGet {
			gets++
			if echo.Load() {
				_, _ = w.Write([]byte(r.URL.Query().Get("validationToken")))
				return
			}
			_, _ = w.Write([]byte("who are you?"))
			return
		}
		posts++
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	r := startRelay(t, func(c *config.Config) {
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		c.WebhookValidation = true
		c.RetryInitial, c.RetryMaxInterval = 100*time.Millisecond, 200*time.Millisecond
	})
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("validate", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": srv.URL + "/hook"}}}, &res)

	// Not echoed: attempts fail with class validation, nothing is POSTed.
	var list struct {
		Deliveries []struct {
			ID     string
			Status string
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	failed := ""
	for failed == "" && time.Now().Before(deadline) {
		_, _, body := get(t, r.url+"/v1/deliveries?task="+res.Task.ID+"&status=failed")
		_ = json.Unmarshal(body, &list)
		if len(list.Deliveries) > 0 {
			failed = list.Deliveries[0].ID
		}
		time.Sleep(50 * time.Millisecond)
	}
	if failed == "" {
		t.Fatal("no failed delivery recorded")
	}
	var one struct {
		Attempts []struct{ ErrorClass, Error string } `json:"attemptLog"`
	}
	_, _, body := get(t, r.url+"/v1/deliveries/"+failed)
	_ = json.Unmarshal(body, &one)
	if len(one.Attempts) == 0 || one.Attempts[0].ErrorClass != "validation" {
		t.Fatalf("attempts = %s", body)
	}
	mu.Lock()
	if posts != 0 {
		t.Fatalf("%d notifications POSTed to an unvalidated host", posts)
	}
	mu.Unlock()

	// Echoed: the retries go through, in order, and no more GETs are sent.
	echo.Store(true)
	deadline = time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		p := posts
		mu.Unlock()
		if p >= 2 || time.Now().After(deadline) { // the task, then its updates
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if posts < 2 {
		t.Fatalf("after validation: %d POSTs", posts)
	}
	g := gets
	mu.Unlock()
	var res2 struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("again", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": srv.URL + "/other"}}}, &res2)
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	if gets != g {
		t.Fatalf("a validated host was asked again (%d GETs, had %d)", gets, g)
	}
}
