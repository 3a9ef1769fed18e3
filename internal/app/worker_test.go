package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

const testWorkerToken = "worker-token-0123456789"

// startWorkerRelay starts relay with every task going to the worker queue "jobs".
func startWorkerRelay(t *testing.T, mut func(*config.Config)) *relay {
	return startRelay(t, func(c *config.Config) {
		c.Agent.Backend = "worker:jobs"
		c.WorkerTokens = []string{testWorkerToken}
		c.WorkerLease = 2 * time.Second
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		if mut != nil {
			mut(c)
		}
	})
}

// workerCall sends one worker API request as curl would and decodes the answer.
func workerCall(t *testing.T, r *relay, path, token string, body any, headers ...string) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, r.url+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: answer is not JSON (%d): %s", path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, out
}

// claim claims a task of queue "jobs", failing the test when none comes.
func claim(t *testing.T, r *relay, worker string) map[string]any {
	t.Helper()
	status, c := workerCall(t, r, "/v1/queues/jobs/claim", testWorkerToken, map[string]any{"workerId": worker, "waitSeconds": 10})
	if status != http.StatusOK {
		t.Fatalf("claim: %d %v", status, c)
	}
	return c
}

func postEvents(t *testing.T, r *relay, c map[string]any, events ...any) (int, map[string]any) {
	t.Helper()
	return workerCall(t, r, "/v1/tasks/"+c["taskId"].(string)+"/events", testWorkerToken,
		map[string]any{"leaseId": c["leaseId"], "events": events})
}

func statusEvent(state, text string) map[string]any {
	st := map[string]any{"state": state}
	if text != "" {
		st["message"] = map[string]any{"messageId": "w-" + text, "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": text}}}
	}
	return map[string]any{"statusUpdate": map[string]any{"status": st}}
}

func artifactEvent(text string, appendChunk, last bool) map[string]any {
	return map[string]any{"artifactUpdate": map[string]any{"artifact": map[string]any{"artifactId": "out",
		"parts": []any{map[string]any{"text": text}}}, "append": appendChunk, "lastChunk": last}}
}

// A worker claims a task a client sent with a webhook, posts 3 updates, an
// artifact in two chunks and completes: the client sees it all by poll,
// by stream and by webhook, in order.
func TestWorkerCompletesTaskSeenByPollStreamAndWebhook(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	hook := newSink(t)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("work please", nil),
		"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook.url("/hook"), "token": "tok"}}}, &res)
	if res.Task.Status.State != "TASK_STATE_SUBMITTED" {
		t.Fatalf("state after send = %s, want submitted (waiting for a worker)", res.Task.Status.State)
	}
	stream, stop := openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID})
	defer stop()

	c := claim(t, r, "w1")
	if c["taskId"] != res.Task.ID || c["attempt"].(float64) != 1 {
		t.Fatalf("claimed %v, want task %s attempt 1", c, res.Task.ID)
	}
	msg := c["message"].(map[string]any)
	if parts := msg["parts"].([]any); parts[0].(map[string]any)["text"] != "work please" {
		t.Fatalf("claimed message = %v", msg)
	}
	for i := 1; i <= 3; i++ {
		if st, out := postEvents(t, r, c, statusEvent("TASK_STATE_WORKING", fmt.Sprintf("step %d", i))); st != 200 || out["state"] != "TASK_STATE_WORKING" {
			t.Fatalf("post step %d: %d %v", i, st, out)
		}
		if st, out := workerCall(t, r, "/v1/tasks/"+res.Task.ID+"/heartbeat", testWorkerToken, map[string]any{"leaseId": c["leaseId"]}); st != 200 || out["canceled"] != false {
			t.Fatalf("heartbeat: %d %v", st, out)
		}
	}
	if st, out := postEvents(t, r, c, artifactEvent("WORK ", false, false), artifactEvent("PLEASE", true, true)); st != 200 {
		t.Fatalf("post artifact: %d %v", st, out)
	}
	st, out := postEvents(t, r, c, statusEvent("TASK_STATE_COMPLETED", "done"))
	if st != 200 || out["released"] != true || out["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("post completed: %d %v", st, out)
	}
	// After the final state the lease is over.
	if st, out := postEvents(t, r, c, statusEvent("TASK_STATE_WORKING", "")); st != http.StatusConflict {
		t.Fatalf("post after completed: %d %v, want 409", st, out)
	}

	// Poll.
	var got v10Task
	r.call("GetTask", map[string]any{"id": res.Task.ID}, &got)
	if got.Status.State != "TASK_STATE_COMPLETED" || len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != 2 {
		t.Fatalf("polled task = %+v", got)
	}
	// Stream: the subscription ends with the task, in order.
	var states []string
	for _, ev := range collect(t, stream) {
		var res map[string]any
		_ = json.Unmarshal(ev.Data.Result, &res)
		if su, ok := res["statusUpdate"].(map[string]any); ok {
			states = append(states, su["status"].(map[string]any)["state"].(string))
		}
	}
	want := "TASK_STATE_WORKING TASK_STATE_WORKING TASK_STATE_WORKING TASK_STATE_COMPLETED"
	if strings.Join(states, " ") != want {
		t.Fatalf("streamed states %v, want %s", states, want)
	}
	// Webhook: the task, 3 updates, 2 chunks, completed.
	hits := hook.waitHits(t, "/hook", 7, 10*time.Second)
	var kinds []string
	for _, h := range hits {
		var n map[string]any
		_ = json.Unmarshal(h.body, &n)
		for k := range n {
			kinds = append(kinds, k)
		}
		if h.header.Get("X-A2A-Notification-Token") != "tok" {
			t.Fatalf("webhook token header = %q", h.header.Get("X-A2A-Notification-Token"))
		}
	}
	if strings.Join(kinds, " ") != "task statusUpdate statusUpdate statusUpdate artifactUpdate artifactUpdate statusUpdate" {
		t.Fatalf("webhook saw %v", kinds)
	}
}

// A worker that stops heartbeating loses its lease; a second worker gets the
// task (attempt 2) and finishes it; the first one's posts are refused.
func TestWorkerLeaseExpiresAndAnotherWorkerFinishes(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("long job", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	c1 := claim(t, r, "w1")
	if st, _ := postEvents(t, r, c1, statusEvent("TASK_STATE_WORKING", "started")); st != 200 {
		t.Fatalf("first worker post: %d", st)
	}
	// w1 dies here: no heartbeat. The next claim waits for its lease (2s) to expire.
	c2 := claim(t, r, "w2")
	if c2["taskId"] != res.Task.ID || c2["attempt"].(float64) != 2 || c2["leaseId"] == c1["leaseId"] {
		t.Fatalf("second claim = %v", c2)
	}
	task := c2["task"].(map[string]any)
	if task["status"].(map[string]any)["state"] != "TASK_STATE_WORKING" {
		t.Fatalf("the second worker sees the task as %v", task["status"])
	}
	if st, out := postEvents(t, r, c1, statusEvent("TASK_STATE_WORKING", "zombie")); st != http.StatusConflict || out["code"] != "lease_lost" {
		t.Fatalf("post under the lost lease: %d %v", st, out)
	}
	if st, out := workerCall(t, r, "/v1/tasks/"+res.Task.ID+"/heartbeat", testWorkerToken, map[string]any{"leaseId": c1["leaseId"]}); st != http.StatusConflict || out["code"] != "lease_lost" {
		t.Fatalf("heartbeat under the lost lease: %d %v", st, out)
	}
	if st, out := postEvents(t, r, c2, statusEvent("TASK_STATE_COMPLETED", "finished by w2")); st != 200 || out["released"] != true {
		t.Fatalf("second worker completes: %d %v", st, out)
	}
	var got v10Task
	r.call("GetTask", map[string]any{"id": res.Task.ID}, &got)
	if got.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("state = %s", got.Status.State)
	}
}

// A cancel by the client reaches the worker: on its heartbeat and as a 409
// on its next post; a task canceled before any claim is never handed out.
func TestWorkerSeesCancel(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("cancel me", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	c := claim(t, r, "w1")
	if st, _ := postEvents(t, r, c, statusEvent("TASK_STATE_WORKING", "")); st != 200 {
		t.Fatal("post working")
	}
	r.call("CancelTask", map[string]any{"id": res.Task.ID}, nil)
	st, out := workerCall(t, r, "/v1/tasks/"+res.Task.ID+"/heartbeat", testWorkerToken, map[string]any{"leaseId": c["leaseId"]})
	if st != 200 || out["canceled"] != true || out["state"] != "TASK_STATE_CANCELED" {
		t.Fatalf("heartbeat after cancel: %d %v", st, out)
	}

	var res2 struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("cancel me too", nil), "configuration": map[string]any{"returnImmediately": true}}, &res2)
	c2 := claim(t, r, "w1")
	r.call("CancelTask", map[string]any{"id": res2.Task.ID}, nil)
	if st, out := postEvents(t, r, c2, statusEvent("TASK_STATE_WORKING", "")); st != http.StatusConflict || out["code"] != "task_canceled" {
		t.Fatalf("post after cancel: %d %v", st, out)
	}

	var res3 struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("never claimed", nil), "configuration": map[string]any{"returnImmediately": true}}, &res3)
	r.call("CancelTask", map[string]any{"id": res3.Task.ID}, nil)
	if st, out := workerCall(t, r, "/v1/queues/jobs/claim", testWorkerToken, map[string]any{"waitSeconds": 0.3}); st != http.StatusNoContent {
		t.Fatalf("claim of a queue holding only a canceled task: %d %v", st, out)
	}
}

// Bad requests get clear errors and change nothing.
func TestWorkerAPIErrors(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	for _, tc := range []struct {
		name, path, token string
		body              any
		status            int
		code              string
	}{
		{"no token", "/v1/queues/jobs/claim", "", map[string]any{}, 401, "unauthorized"},
		{"wrong token", "/v1/queues/jobs/claim", "not-a-worker-token-at-all", map[string]any{}, 401, "unauthorized"},
		{"bad queue", "/v1/queues/bad%20queue/claim", testWorkerToken, map[string]any{}, 400, "bad_request"},
		{"wait too long", "/v1/queues/jobs/claim", testWorkerToken, map[string]any{"waitSeconds": 3600}, 400, "bad_request"},
		{"body not json", "/v1/tasks/x/events", testWorkerToken, "nope", 400, "bad_request"},
		{"no lease", "/v1/tasks/x/heartbeat", testWorkerToken, map[string]any{}, 400, "bad_request"},
		{"forged lease", "/v1/tasks/x/heartbeat", testWorkerToken, map[string]any{"leaseId": "am9icw.abc"}, 404, "not_found"},
	} {
		st, out := workerCall(t, r, tc.path, tc.token, tc.body)
		if st != tc.status || out["code"] != tc.code || out["error"] == "" {
			t.Errorf("%s: %d %v, want %d %s", tc.name, st, out, tc.status, tc.code)
		}
	}
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("strict", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	c := claim(t, r, "w1")
	for _, tc := range []struct {
		name   string
		events []any
		status int
		code   string
	}{
		{"no events", nil, 400, "bad_request"},
		{"unknown state", []any{statusEvent("TASK_STATE_DREAMING", "")}, 400, "bad_request"},
		{"other task", []any{map[string]any{"statusUpdate": map[string]any{"taskId": "other", "status": map[string]any{"state": "TASK_STATE_WORKING"}}}}, 400, "bad_request"},
		{"not an update", []any{map[string]any{"message": map[string]any{"messageId": "x", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "hi"}}}}}, 400, "bad_request"},
		{"breaks the state machine", []any{statusEvent("TASK_STATE_SUBMITTED", "")}, 422, "invalid_transition"},
	} {
		st, out := postEvents(t, r, c, tc.events...)
		if st != tc.status || out["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, st, out, tc.status, tc.code)
		}
	}
	// v0.3 event shapes are accepted with A2A-Version: 0.3.
	st, out := workerCall(t, r, "/v1/tasks/"+res.Task.ID+"/events", testWorkerToken, map[string]any{"leaseId": c["leaseId"],
		"events": []any{map[string]any{"kind": "status-update", "status": map[string]any{"state": "working"}},
			map[string]any{"kind": "status-update", "status": map[string]any{"state": "completed"}, "final": true}}}, "A2A-Version", "0.3")
	if st != 200 || out["state"] != "completed" {
		t.Fatalf("v0.3 post: %d %v", st, out)
	}
}

// The embedded store runs the same claim scripts: claim, lease expiry and
// takeover, release, completion.
func TestWorkerOnEmbeddedStore(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Agent.Backend, cfg.WorkerTokens, cfg.WorkerLease = "worker:jobs", []string{testWorkerToken}, time.Second
	r := startWith(t, cfg)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("embedded", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	c1 := claim(t, r, "w1")
	if st, out := workerCall(t, r, "/v1/tasks/"+res.Task.ID+"/release", testWorkerToken, map[string]any{"leaseId": c1["leaseId"]}); st != 200 {
		t.Fatalf("release: %d %v", st, out)
	}
	c2 := claim(t, r, "w2") // at once: released
	if c2["attempt"].(float64) != 2 {
		t.Fatalf("claim after release: %v", c2)
	}
	if st, _ := postEvents(t, r, c2, statusEvent("TASK_STATE_WORKING", "")); st != 200 {
		t.Fatal("post")
	}
	c3 := claim(t, r, "w3") // after w2's lease expired
	if c3["attempt"].(float64) != 3 {
		t.Fatalf("claim after expiry: %v", c3)
	}
	if st, out := postEvents(t, r, c3, statusEvent("TASK_STATE_COMPLETED", "")); st != 200 || out["released"] != true {
		t.Fatalf("complete: %d %v", st, out)
	}
}

// Routing by skill: a message naming the "jobs" skill goes to the worker
// queue, one naming none goes to the default backend (the demo agent), and
// one naming a skill the card does not list is refused.
func TestRoutingBySkill(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		c.WorkerTokens = []string{testWorkerToken}
		c.Agent.Skills = append(c.Agent.Skills, config.SkillConfig{ID: "jobs", Name: "Jobs", Backend: "worker:jobs"})
	})
	var card struct{ Skills []struct{ ID string } }
	_, _, body := get(t, r.url+"/.well-known/agent-card.json")
	_ = json.Unmarshal(body, &card)
	if len(card.Skills) != 2 || card.Skills[1].ID != "jobs" {
		t.Fatalf("card skills = %+v", card.Skills)
	}
	var viaWorker struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("for a worker", map[string]any{"metadata": map[string]any{"skill": "jobs"}}),
		"configuration": map[string]any{"returnImmediately": true}}, &viaWorker)
	c := claim(t, r, "w1")
	if c["taskId"] != viaWorker.Task.ID {
		t.Fatalf("claimed %v, want the jobs task %s", c["taskId"], viaWorker.Task.ID)
	}
	var viaDemo struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("for the demo", nil)}, &viaDemo) // blocking: the demo finishes it
	if viaDemo.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("default backend left the task %s", viaDemo.Task.Status.State)
	}
	wantError(t, r.callRaw("SendMessage", map[string]any{"message": v10Message("nobody", map[string]any{"metadata": map[string]any{"skill": "nope"}})}), -32602)
}

// A claim whose worker hung up stops waiting, so it does not take the next
// task away from the workers still listening.
func TestAbandonedClaimTakesNothing(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, func(c *config.Config) { c.WorkerLease = time.Minute })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/v1/queues/jobs/claim", strings.NewReader(`{"waitSeconds":30}`))
	req.Header.Set("Authorization", "Bearer "+testWorkerToken)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(300 * time.Millisecond) // the claim waits
	cancel()                           // the worker hangs up
	<-done
	time.Sleep(600 * time.Millisecond) // the server notices within a poll
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("for a live worker", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	c := claim(t, r, "w2")
	if c["taskId"] != res.Task.ID || c["attempt"].(float64) != 1 {
		t.Fatalf("live worker got %v (attempt %v), want the new task at attempt 1", c["taskId"], c["attempt"])
	}
}
