package app

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// dialectSend sends one message in a dialect: to a new task (taskID ""),
// or to taskID.
type dialectSend struct {
	name, method string
	params       func(n int, taskID string, parts []any, meta map[string]any) map[string]any
}

// dialectSends are message sends in v0.1, v0.3 and v1.0.
func dialectSends() []dialectSend {
	return []dialectSend{
		{"v0.1", "tasks/send", func(n int, taskID string, parts []any, meta map[string]any) map[string]any {
			m := v01Message("x", meta)
			if parts != nil {
				for _, p := range parts {
					p.(map[string]any)["type"] = "text"
				}
				m["parts"] = parts
			}
			return map[string]any{"id": cmp.Or(taskID, "limits-v01-"+strconv.Itoa(n)), "message": m}
		}},
		{"v0.3", "message/send", func(n int, taskID string, parts []any, meta map[string]any) map[string]any {
			m := v03Message("x"+strconv.Itoa(n), map[string]any{"metadata": meta})
			if parts != nil {
				for _, p := range parts {
					p.(map[string]any)["kind"] = "text"
				}
				m["parts"] = parts
			}
			if taskID != "" {
				m["taskId"] = taskID
			}
			return map[string]any{"message": m}
		}},
		{"v1.0", "SendMessage", func(n int, taskID string, parts []any, meta map[string]any) map[string]any {
			m := v10Message("x"+strconv.Itoa(n), map[string]any{"metadata": meta})
			if parts != nil {
				m["parts"] = parts
			}
			if taskID != "" {
				m["taskId"] = taskID
			}
			return map[string]any{"message": m}
		}},
	}
}

// textParts is n text parts of size bytes each.
func textParts(n, size int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"text": strings.Repeat("p", size)}
	}
	return out
}

// Each limit on one request (parts and bytes of a message, demo steps and
// artifact chunks) refuses a message over it with -32602 naming the field,
// in every dialect, and stores nothing; a message within the limits passes.
func TestPerRequestLimitsRefuseWithTheFieldInEveryDialect(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		c.MaxMessageParts, c.MaxMessageBytes, c.DemoMaxSteps = 4, 4096, 10
	})
	quick := demo(map[string]any{"steps": 0})
	cases := []struct {
		name, field string
		parts       []any
		meta        map[string]any
	}{
		{"too many parts", "message.parts", textParts(5, 1), quick},
		{"too many bytes", "message", textParts(2, 2100), quick},
		{"too many demo steps", "message.metadata.demo.steps", nil, demo(map[string]any{"steps": 11})},
		{"too many demo chunks", "message.metadata.demo.artifactChunks", nil, demo(map[string]any{"artifactChunks": 11})},
		{"negative demo delay", "message.metadata.demo.delayMs", nil, demo(map[string]any{"delayMs": -1})},
	}
	for _, d := range dialectSends() {
		for i, c := range cases {
			before := taskCount(t, r, "")
			res := r.callRaw(d.method, d.params(i, "", c.parts, c.meta))
			if got := refusedField(t, res); got != c.field {
				t.Errorf("%s, %s: refused field %q, want %q (%s)", d.name, c.name, got, c.field, res.Error.Message)
			}
			if n := taskCount(t, r, ""); n != before {
				t.Errorf("%s, %s: a refused send made a task", d.name, c.name)
			}
		}
		// At the limits: accepted.
		if res := r.callRaw(d.method, d.params(99, "", textParts(4, 900), demo(map[string]any{"steps": 10, "artifactChunks": 10}))); res.Error != nil {
			t.Errorf("%s: a message at the limits: %d %s", d.name, res.Error.Code, res.Error.Message)
		}
	}
}

// A task keeps at most task_max_history messages: the next is refused
// with -32602 naming message, in every dialect, and the task is unchanged.
func TestHistoryKeptPerTaskIsBoundedInEveryDialect(t *testing.T) {
	t.Parallel()
	const max = 3
	r := startRelay(t, func(c *config.Config) { c.TaskMaxHistory = max })
	waiting := demo(map[string]any{"outcome": "input-required"})
	for _, d := range dialectSends() {
		res := r.callRaw(d.method, d.params(0, "", nil, waiting))
		if res.Error != nil {
			t.Fatalf("%s: %s", d.name, res.Error.Message)
		}
		var created struct {
			ID   string
			Task struct{ ID string }
		}
		if err := json.Unmarshal(res.Result, &created); err != nil {
			t.Fatalf("%s: result %s: %v", d.name, res.Result, err)
		}
		id := cmp.Or(created.ID, created.Task.ID)
		if id == "" {
			t.Fatalf("%s: no task id in %s", d.name, res.Result)
		}
		for i := 1; i < max; i++ {
			waitInterrupted(t, r, id)
			if res := r.callRaw(d.method, d.params(i, id, nil, waiting)); res.Error != nil {
				t.Fatalf("%s: message %d: %s", d.name, i+1, res.Error.Message)
			}
		}
		waitInterrupted(t, r, id)
		if got := refusedField(t, r.callRaw(d.method, d.params(max, id, nil, waiting))); got != "message" {
			t.Errorf("%s: message %d refused naming %q, want message", d.name, max+1, got)
		}
		var task v10Task
		r.call("GetTask", map[string]any{"id": id}, &task)
		if len(task.History) != max || task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("%s: after the refusal the task has %d messages and is %s, want %d and input-required", d.name, len(task.History), task.Status.State, max)
		}
	}
}

// waitInterrupted waits until task id asks for input.
func waitInterrupted(t *testing.T, r *relay, id string) {
	t.Helper()
	pollUntil(t, r, id, "TASK_STATE_INPUT_REQUIRED")
}

// delayMs 0 is accepted, and the demo's events are paced at
// demo_max_events_per_second. The test asserts a lower bound on the time
// the task took, on the monotonic clock: the pacing's timers never fire
// early, so a slow machine only makes the task take longer, and the
// bound cannot fail for it (without pacing the 12 events take a few ms).
func TestDemoEventsArePaced(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.DemoMaxEventsPerSecond = 40 })
	start := time.Now()
	var task struct{ Status struct{ State string } }
	r.call("message/send", map[string]any{"message": v03Message("paced", map[string]any{"metadata": demo(map[string]any{"steps": 10, "delayMs": 0})}),
		"configuration": map[string]any{"blocking": true}}, &task)
	// 10 working updates, the artifact and completed: 12 events, 11 gaps of 25 ms.
	if took := time.Since(start); task.Status.State != "completed" || took < 11*25*time.Millisecond {
		t.Fatalf("task %s after %v; want completed, paced over at least 275ms", task.Status.State, took)
	}
}
