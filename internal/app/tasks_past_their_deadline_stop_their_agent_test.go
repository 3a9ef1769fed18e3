package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// deadlineStatus is a task's state and status message text (v1.0).
type deadlineStatus struct {
	Task struct {
		Status struct {
			State   string `json:"state"`
			Message *struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"status"`
	}
}

func (d deadlineStatus) text() string {
	if m := d.Task.Status.Message; m != nil && len(m.Parts) > 0 {
		return m.Parts[0].Text
	}
	return ""
}

// waitFailed waits (up to 20s) for task id to fail, and returns its status
// message text.
func waitFailed(t *testing.T, r *relay, id string) string {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var got deadlineStatus
		r.call("GetTask", map[string]any{"id": id}, &got.Task)
		if got.Task.Status.State == "TASK_STATE_FAILED" {
			return got.text()
		}
	}
	t.Fatalf("task %s did not fail at its deadline", id)
	return ""
}

// A worker task past its skill's max run fails with a status message
// saying so; over the worker API, its worker's heartbeat answers
// canceled with the reason, and a post is refused as for a cancel. The
// demo agent's task is held to the same limit.
func TestTasksPastTheirDeadlineStopTheirAgent(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, func(c *config.Config) {
		c.TaskMaxWait = time.Hour // the skill's max_run is the one that applies
		// A lease that outlives the wait for the failure, however slow the
		// machine: the post below must meet the failed task, not a lapsed lease.
		c.WorkerLease = time.Minute
		c.Agent.Skills = append(c.Agent.Skills,
			config.SkillConfig{ID: "jobs", Name: "Jobs", MaxRun: 300 * time.Millisecond},
			config.SkillConfig{ID: "slow-demo", Name: "Slow demo", Backend: "demo", MaxRun: 300 * time.Millisecond})
	})
	send := func(text, skill string, extra map[string]any) string {
		md := map[string]any{"skill": skill}
		for k, v := range extra {
			md[k] = v
		}
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message(text, map[string]any{"metadata": md}),
			"configuration": map[string]any{"returnImmediately": true}}, &res)
		return res.Task.ID
	}
	beats, posts := send("heartbeats", "jobs", nil), send("posts", "jobs", nil)
	cb, cp := claim(t, r, "w1"), claim(t, r, "w2")
	if cb["taskId"] != beats || cp["taskId"] != posts {
		t.Fatalf("claimed %v and %v, want %s and %s", cb["taskId"], cp["taskId"], beats, posts)
	}
	for _, c := range []map[string]any{cb, cp} {
		if st, out := postEvents(t, r, c, statusEvent("TASK_STATE_WORKING", "")); st != 200 {
			t.Fatalf("post working: %d %v", st, out)
		}
	}
	for _, id := range []string{beats, posts} {
		if text := waitFailed(t, r, id); !strings.HasPrefix(text, "relay: the task ran ") || !strings.HasSuffix(text, "; the limit is 300ms (max run)") {
			t.Fatalf("task %s failed with %q", id, text)
		}
	}
	st, out := workerCall(t, r, "/v1/tasks/"+beats+"/heartbeat", testWorkerToken, map[string]any{"leaseId": cb["leaseId"]})
	if reason, _ := out["reason"].(string); st != 200 || out["canceled"] != true || out["state"] != "TASK_STATE_FAILED" ||
		!strings.HasSuffix(reason, "(max run)") || out["leaseExpiresAt"] != nil {
		t.Fatalf("heartbeat after the deadline: %d %v", st, out)
	}
	st, out = postEvents(t, r, cp, statusEvent("TASK_STATE_COMPLETED", "done"))
	if msg, _ := out["error"].(string); st != http.StatusConflict || out["code"] != "task_canceled" || !strings.Contains(msg, "(max run)") {
		t.Fatalf("post after the deadline: %d %v", st, out)
	}

	demoTask := send("slow", "slow-demo", map[string]any{"demo": map[string]any{"steps": 100, "delayMs": 200}})
	if text := waitFailed(t, r, demoTask); !strings.HasSuffix(text, "; the limit is 300ms (max run)") {
		t.Fatalf("demo task failed with %q", text)
	}
}
