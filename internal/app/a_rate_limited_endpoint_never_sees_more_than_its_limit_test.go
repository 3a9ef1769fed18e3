package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// limitSink is a webhook receiver that records when each notification
// arrived, how many were in flight at once, and the notifications in
// arrival order; every fifth answer is slow, so that the cap in flight
// is reached.
type limitSink struct {
	srv       *httptest.Server
	mu        sync.Mutex
	arrivals  []time.Time
	inFlight  int
	maxFlight int
	bodies    [][]byte
	ids       map[string]int
}

// taskOf is the task id a v1.0 notification is about.
func taskOf(t *testing.T, body []byte) string {
	t.Helper()
	var sr struct {
		Task           *struct{ ID string }
		StatusUpdate   *struct{ TaskID string }
		ArtifactUpdate *struct{ TaskID string }
	}
	if err := json.Unmarshal(body, &sr); err != nil {
		t.Fatalf("notification %s: %v", body, err)
	}
	switch {
	case sr.Task != nil:
		return sr.Task.ID
	case sr.StatusUpdate != nil:
		return sr.StatusUpdate.TaskID
	case sr.ArtifactUpdate != nil:
		return sr.ArtifactUpdate.TaskID
	}
	return ""
}

func newLimitSink(t *testing.T) *limitSink {
	s := &limitSink{ids: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.arrivals = append(s.arrivals, time.Now())
		s.inFlight++
		s.maxFlight = max(s.maxFlight, s.inFlight)
		n := len(s.arrivals)
		s.bodies = append(s.bodies, body)
		s.ids[r.Header.Get("A2A-Notification-Id")]++
		s.mu.Unlock()
		delay := 20 * time.Millisecond
		if n%5 == 0 {
			delay = 400 * time.Millisecond
		}
		time.Sleep(delay)
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// A config with rateLimit N and maxConcurrent M, its deliveries made by two
// relays sharing Redis: its endpoint never has more than M in flight, never
// gets more than N in any second, and gets every notification once, in
// order per task, with no failed attempt counted; the waits are counted
// in relay_webhook_limit_waits_total.
func TestARateLimitedEndpointNeverSeesMoreThanItsLimit(t *testing.T) {
	eachPath(t, testARateLimitedEndpointNeverSeesMoreThanItsLimit)
}

func testARateLimitedEndpointNeverSeesMoreThanItsLimit(t *testing.T, path string) {
	t.Parallel()
	const rate, maxConcurrent, tasks = 8, 2, 8
	s := newLimitSink(t)
	a := deliveringRelayOn(t, path, nil)
	cfg := a.app.cfg
	cfg.Addr = "127.0.0.1:0"
	b := startWith(t, cfg) // same Redis, same prefix: a second instance
	ext := map[string]any{a2a.WebhookExtensionURI: map[string]any{"rateLimit": rate, "maxConcurrent": maxConcurrent}}
	hook := s.srv.URL + "/limited" // one URL: its limits hold for every task's config of it
	want := map[string][]string{}
	total := 0
	for i := range tasks {
		r := []*relay{a, b}[i%2]
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message(fmt.Sprint("limited ", i), map[string]any{"metadata": demo(map[string]any{"steps": 1})}),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook, "metadata": ext}}}, &res)
		for _, e := range readEvents(t, r, res.Task.ID) {
			switch e.Kind {
			case "task":
				want[res.Task.ID] = append(want[res.Task.ID], "task")
			case "status-update":
				want[res.Task.ID] = append(want[res.Task.ID], strings.ReplaceAll(e.Status.State, "-", "_"))
			case "artifact-update":
				want[res.Task.ID] = append(want[res.Task.ID], "artifact")
			default:
				continue
			}
			total++
		}
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
	for id, kinds := range want { // every record delivered at its first attempt: no failure counted
		recs := waitTaskRecords(t, a, id, len(kinds))
		for _, d := range recs {
			if d.Attempts != 1 {
				t.Fatalf("task %s: a delivery of %d attempts: %+v", id, d.Attempts, recs)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxFlight > maxConcurrent {
		t.Errorf("%d notifications in flight at once, over the cap of %d", s.maxFlight, maxConcurrent)
	}
	for i, at := range s.arrivals {
		j := i
		for j < len(s.arrivals) && s.arrivals[j].Sub(at) < time.Second {
			j++
		}
		if j-i > rate {
			t.Errorf("%d notifications arrived within a second of %s, over the rate of %d", j-i, at.Format("15:04:05.000"), rate)
			break
		}
	}
	for id, n := range s.ids {
		if n != 1 {
			t.Errorf("notification %s arrived %d times", id, n)
		}
	}
	if len(s.ids) != total {
		t.Errorf("%d notifications arrived, want %d", len(s.ids), total)
	}
	byTask := map[string][]string{}
	for _, body := range s.bodies {
		task := taskOf(t, body)
		byTask[task] = append(byTask[task], streamKind(t, body))
	}
	for id, kinds := range want {
		if got := byTask[id]; !slices.Equal(got, kinds) {
			t.Errorf("task %s: notifications in the order %v, want %v", id, got, kinds)
		}
	}
	waits := 0.0
	for _, r := range []*relay{a, b} {
		_, _, body := get(t, r.url+"/metrics")
		for _, m := range limitWaitsRE.FindAllStringSubmatch(string(body), -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			waits += v
		}
	}
	if waits == 0 {
		t.Errorf("relay_webhook_limit_waits_total counted no wait")
	}
}

var limitWaitsRE = regexp.MustCompile(`(?m)^relay_webhook_limit_waits_total\{limit="(?:rate|concurrency)"\} (\S+)$`)

// waitTaskRecords waits until task's delivery records are n, all delivered.
func waitTaskRecords(t *testing.T, r *relay, task string, n int) []struct {
	ID, TaskID, ConfigID, Status string
	Attempts                     int
} {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		recs := listDeliveries(t, r, "task="+task)
		delivered := 0
		for _, d := range recs {
			if d.Status == "delivered" {
				delivered++
			}
		}
		if delivered == n && len(recs) == n {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %d of %d records delivered: %+v", task, delivered, n, recs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
