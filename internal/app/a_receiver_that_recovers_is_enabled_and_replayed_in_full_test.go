package app

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
)

// The whole story of a receiver that fails for a while, then recovers: it
// is disabled, the operator is alerted, notifications committed meanwhile
// are skipped; the operator enables it again and replays the window by its
// URL at once (no relay may skip the replay again for having read the
// disabled set before the enable); the receiver then holds every
// notification of every task, with the ids relay gave them, in commit
// order per task.
func TestAReceiverThatRecoversIsEnabledAndReplayedInFull(t *testing.T) {
	eachPath(t, testAReceiverThatRecoversIsEnabledAndReplayedInFull)
}

func testAReceiverThatRecoversIsEnabledAndReplayedInFull(t *testing.T, path string) {
	t.Parallel()
	ops, hook, healthy, r := failingHookRelay(t, path)
	since := time.Now().Add(-time.Second)
	send := func(text string) string {
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message(text, map[string]any{"metadata": demo(map[string]any{"steps": 1})}),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "h", "url": hook.url("/h")}}}, &res)
		return res.Task.ID
	}
	tasks := []string{send("while failing")}
	alerts := waitAlerts(t, ops, "endpoint.failing", "endpoint.disabled")
	id := alerts["endpoint.disabled"].EndpointID
	tasks = append(tasks, send("while disabled 1"), send("while disabled 2"))
	for _, task := range tasks[1:] {
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			recs := listDeliveries(t, r, "task="+task)
			if len(recs) > 0 && allStatus(recs, "dropped") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the deliveries of %s were not skipped: %+v", task, recs)
			}
		}
	}

	healthy.Store(true)
	if status, body := postJSON(t, r.url+"/v1/endpoints/"+id+"/enable"); status != http.StatusOK {
		t.Fatalf("enable: %d %s", status, body)
	}
	status, ans := replay(t, r, map[string]any{"url": hook.url("/h"), "since": rfc3339(since)})
	if status != http.StatusAccepted || ans.Truncated || ans.UnavailableBefore != nil || ans.Configs != 3 {
		t.Fatalf("replay answered %d %+v", status, ans)
	}
	total := 0
	want := map[string][]string{}
	for _, task := range tasks {
		want[task] = committedIDs(t, r, task)
		total += len(want[task])
	}
	if ans.Queued+ans.AlreadyQueued != total {
		t.Fatalf("replay queued %d (+%d waiting), want the %d notifications committed", ans.Queued, ans.AlreadyQueued, total)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := deliveredIDs(hook, "/h", tasks)
		done := true
		for _, task := range tasks {
			done = done && len(got[task]) >= len(want[task])
		}
		if done || time.Now().After(deadline) {
			for _, task := range tasks {
				if !slices.Equal(got[task], want[task]) {
					t.Fatalf("task %s: the receiver holds %v, want every notification in commit order %v", task, got[task], want[task])
				}
			}
			return
		}
	}
}

// committedIDs lists the notification ids of a task's deliveries in commit
// order (their events' order).
func committedIDs(t *testing.T, r *relay, task string) []string {
	t.Helper()
	status, _, body := get(t, r.url+"/v1/deliveries?task="+task)
	var out struct {
		Deliveries []struct{ ID, EventID string }
	}
	if status != 200 || json.Unmarshal(body, &out) != nil || len(out.Deliveries) == 0 {
		t.Fatalf("deliveries of %s: %d %s", task, status, body)
	}
	slices.SortFunc(out.Deliveries, func(a, b struct{ ID, EventID string }) int {
		if layout.IDBefore(a.EventID, b.EventID) {
			return -1
		}
		return 1
	})
	ids := make([]string, len(out.Deliveries))
	for i, d := range out.Deliveries {
		ids[i] = d.ID
	}
	return ids
}

// deliveredIDs lists, per task, the ids of the notifications the receiver
// accepted, each once (a receiver dedupes on the id), in the order it
// first accepted them.
func deliveredIDs(s *sink, path string, tasks []string) map[string][]string {
	out := map[string][]string{}
	seen := map[string]bool{}
	for _, h := range s.hitsOf(path) {
		nid := h.header.Get("A2A-Notification-Id")
		if h.status != 200 || seen[nid] {
			continue
		}
		for _, task := range tasks {
			if strings.Contains(string(h.body), task) {
				seen[nid] = true
				out[task] = append(out[task], nid)
			}
		}
	}
	return out
}
