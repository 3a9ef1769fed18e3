package app

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// The repro of issue #16 without blocking: each send is admitted before
// the demo writes its answer, so unless admission charges what the demo
// will write (its echo of the message, its steps), a client passes its
// budget by the output of every send admitted before those answers are
// stored (1 MiB messages with 50 steps passed a 32 MiB budget 2.4 times).
// Alice sends in a row, within one read of her figures; bob sends a
// second and more apart, past each read, to demo tasks that take 5 s:
// what charged his earlier sends must outlive the instance's read of his
// figures, so it is counted in Redis (a reserve) until the demo writes.
// What each client's tasks store once all have ended, as the usage
// counts it, stays within a fifth over the budget.
func TestAgentOutputIsChargedAtAdmission(t *testing.T) {
	t.Parallel()
	const budget = 16 << 20
	r, _ := startBudgetRelay(t, func(c *config.Config) { c.Security.ClientMaxStorageBytes = budget })
	var wg sync.WaitGroup
	for _, c := range []struct {
		key, owner string
		delayMs    int
		spacing    time.Duration
	}{{aliceKey, "key:alice", 0, 0}, {bobKey, "key:bob", 100, 1200 * time.Millisecond}} {
		wg.Go(func() {
			ids := sendUntilRefused(t, r, c.key, c.delayMs, c.spacing)
			waitCompleted(t, r, c.key, ids)
			u, err := r.app.store.Usage(context.Background(), c.owner, time.Now())
			if err != nil {
				t.Error(err)
				return
			}
			t.Logf("%s: %d sends accepted; usage %.1f MiB under a budget of %d MiB", c.owner, len(ids), float64(u.Bytes)/(1<<20), budget>>20)
			if u.Bytes > budget*6/5 {
				t.Errorf("%s's tasks store %d bytes (%.2f budgets) once ended: want at most 1.2 budgets", c.owner, u.Bytes, float64(u.Bytes)/budget)
			}
		})
	}
	wg.Wait()
}

// sendUntilRefused sends the repro (its demo steps delayMs apart) without
// blocking, spacing apart, until the budget refuses one (at most 24), and
// returns the ids of the tasks accepted.
func sendUntilRefused(t *testing.T, r *relay, key string, delayMs int, spacing time.Duration) []string {
	var ids []string
	for i := range 24 {
		send := reproSend(i)
		send["configuration"].(map[string]any)["blocking"] = false
		send["message"].(map[string]any)["metadata"] = demo(map[string]any{"steps": 50, "delayMs": delayMs})
		res := as(r, key, "message/send", send)
		if res.Error != nil {
			if res.Error.Code != -32029 {
				t.Errorf("send %d: %d %s; want it accepted or refused by the budget (-32029)", i, res.Error.Code, res.Error.Message)
			}
			break
		}
		var task struct{ ID string }
		if err := json.Unmarshal(res.Result, &task); err != nil || task.ID == "" {
			t.Errorf("send %d: result %s", i, res.Result)
			break
		}
		ids = append(ids, task.ID)
		time.Sleep(spacing)
	}
	if len(ids) == 0 || len(ids) == 24 {
		t.Errorf("%d of 24 sends accepted: want some, not all", len(ids))
	}
	return ids
}

// waitCompleted waits until every task of ids is completed: its whole
// output is stored.
func waitCompleted(t *testing.T, r *relay, key string, ids []string) {
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			res := as(r, key, "tasks/get", map[string]any{"id": id, "historyLength": 0})
			var task struct {
				Status struct{ State string }
			}
			if res.Error != nil || json.Unmarshal(res.Result, &task) != nil {
				t.Errorf("tasks/get %s: %+v", id, res.Error)
				return
			}
			if task.Status.State == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("task %s is %s after 60s", id, task.Status.State)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
