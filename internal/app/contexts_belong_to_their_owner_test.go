package app

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/worker"
)

// startTenantWorkerRelay starts relay with the clients alice and bob, and
// every task going to the worker queue "jobs".
func startTenantWorkerRelay(t *testing.T) *relay {
	return startTenantRelay(t, func(c *config.Config) {
		c.Agent.Backend = "worker:jobs"
		c.WorkerTokens = []string{testWorkerToken}
		c.WorkerLease = 2 * time.Second
		c.BlockingTimeout = 50 * time.Millisecond // v0.1's tasks/send blocks; nobody works yet
	})
}

// alice and bob name the same contextId, in every dialect (v0.1 calls it
// sessionId). Each gets a context of their own with that id: no error,
// nothing of the other's to see or join; a worker is told whose task it
// claims, so it can keep memory per (owner, contextId).
func TestContextsBelongToTheirOwner(t *testing.T) {
	t.Parallel()
	r := startTenantWorkerRelay(t)
	const shared = "ctx-shared"

	var a1 struct{ Task v10Task }
	res := as(r, aliceKey, "SendMessage", map[string]any{"message": v10Message("alice one", map[string]any{"contextId": shared}),
		"configuration": map[string]any{"returnImmediately": true}})
	if res.Error != nil {
		t.Fatalf("alice send: %v", res.Error.Message)
	}
	_ = json.Unmarshal(res.Result, &a1)
	var b1 v03Task
	res = as(r, bobKey, "message/send", map[string]any{"message": v03Message("bob one", map[string]any{"contextId": shared}),
		"configuration": map[string]any{"blocking": false}})
	if res.Error != nil {
		t.Fatalf("bob send (v0.3), naming alice's contextId: %v", res.Error.Message)
	}
	_ = json.Unmarshal(res.Result, &b1)
	var b2 v01Task
	res = as(r, bobKey, "tasks/send", map[string]any{"id": "bob-v01", "sessionId": shared, "message": v01Message("bob two", nil)})
	if res.Error != nil {
		t.Fatalf("bob send (v0.1), naming alice's sessionId: %v", res.Error.Message)
	}
	_ = json.Unmarshal(res.Result, &b2)
	if a1.Task.ContextID != shared || b1.ContextID != shared || b2.SessionID != shared {
		t.Fatalf("contexts: alice %q, bob %q and %q; want %q each", a1.Task.ContextID, b1.ContextID, b2.SessionID, shared)
	}
	owners := map[string]string{a1.Task.ID: "key:alice", b1.ID: "key:bob", b2.ID: "key:bob"}

	// Each claim names the task's owner, over the wire and in the Go package.
	leases := map[string]map[string]any{}
	for range 2 {
		c := claim(t, r, "raw")
		id, _ := c["taskId"].(string)
		owner, ok := c["owner"].(string)
		if !ok || owner != owners[id] || c["contextId"] != shared {
			t.Errorf("claim of task %s: owner %v (present: %v), contextId %v; want owner %q, contextId %q", id, c["owner"], ok, c["contextId"], owners[id], shared)
		}
		leases[id] = c
	}
	wc := &worker.Client{BaseURL: r.url, Token: testWorkerToken, Queue: "jobs", WorkerID: "pkg"}
	j, err := wc.Claim(context.Background(), 5*time.Second)
	if err != nil || j == nil {
		t.Fatalf("worker package claim = %+v, %v", j, err)
	}
	if j.Owner != owners[j.TaskID] || j.ContextID != shared {
		t.Errorf("worker.Job of task %s: Owner %q, ContextID %q; want %q, %q", j.TaskID, j.Owner, j.ContextID, owners[j.TaskID], shared)
	}
	for _, st := range []string{worker.StateWorking, worker.StateInputRequired} {
		if err := j.Status(context.Background(), st, "which one?"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range leases {
		if status, out := postEvents(t, r, c, statusEvent("TASK_STATE_WORKING", ""), statusEvent("TASK_STATE_INPUT_REQUIRED", "which one?")); status != http.StatusOK {
			t.Fatalf("post: %d %v", status, out)
		}
	}

	// bob cannot join alice's task by naming the context; his own he continues.
	res = as(r, bobKey, "SendMessage", map[string]any{"message": v10Message("join", map[string]any{"taskId": a1.Task.ID, "contextId": shared})})
	wantError(t, res, -32001)
	// Naming another context gets the same answer, which does not tell him alice's.
	res = as(r, bobKey, "SendMessage", map[string]any{"message": v10Message("guess", map[string]any{"taskId": a1.Task.ID, "contextId": "ctx-guess"})})
	wantError(t, res, -32001)
	if strings.Contains(res.Error.Message, shared) {
		t.Errorf("bob's error names alice's context: %s", res.Error.Message)
	}
	res = as(r, bobKey, "message/send", map[string]any{"message": v03Message("bob answers", map[string]any{"taskId": b1.ID, "contextId": shared}),
		"configuration": map[string]any{"blocking": false}})
	if res.Error != nil {
		t.Fatalf("bob continues his task in %s: %v", shared, res.Error.Message)
	}
	c := claim(t, r, "raw")
	if c["taskId"] != b1.ID || c["owner"] != "key:bob" || c["contextId"] != shared {
		t.Errorf("claim after bob's answer: task %v, owner %v, contextId %v; want %s, key:bob, %s", c["taskId"], c["owner"], c["contextId"], b1.ID, shared)
	}
	// ListTasks by that contextId: each sees exactly their own tasks there.
	res = as(r, aliceKey, "SendMessage", map[string]any{"message": v10Message("alice elsewhere", map[string]any{"contextId": "ctx-other"}),
		"configuration": map[string]any{"returnImmediately": true}})
	if res.Error != nil {
		t.Fatalf("alice send: %v", res.Error.Message)
	}
	list := func(key string) []string {
		t.Helper()
		var l struct {
			Tasks     []v10Task
			TotalSize int
		}
		res := as(r, key, "ListTasks", map[string]any{"contextId": shared})
		if res.Error != nil {
			t.Fatalf("ListTasks: %v", res.Error.Message)
		}
		_ = json.Unmarshal(res.Result, &l)
		var ids []string
		for _, task := range l.Tasks {
			ids = append(ids, task.ID)
		}
		if l.TotalSize != len(ids) {
			t.Errorf("ListTasks totalSize %d, for %d tasks", l.TotalSize, len(ids))
		}
		slices.Sort(ids)
		return ids
	}
	if got := list(aliceKey); !slices.Equal(got, []string{a1.Task.ID}) {
		t.Errorf("alice lists %v in %s, want only her task %s", got, shared, a1.Task.ID)
	}
	bobs := []string{b1.ID, b2.ID}
	slices.Sort(bobs)
	if got := list(bobKey); !slices.Equal(got, bobs) {
		t.Errorf("bob lists %v in %s, want only his tasks %v", got, shared, bobs)
	}

	var a v10Task
	_ = json.Unmarshal(as(r, aliceKey, "GetTask", map[string]any{"id": a1.Task.ID}).Result, &a)
	for _, m := range a.History {
		if m.Role == "ROLE_USER" && (len(m.Parts) != 1 || m.Parts[0].Text == nil || *m.Parts[0].Text != "alice one") {
			t.Errorf("alice's task holds a user message that is not hers: %+v", m)
		}
	}
	if a.Status.State != "TASK_STATE_INPUT_REQUIRED" || len(a.History) == 0 {
		t.Errorf("alice's task: %s with %d messages, want input-required with her message", a.Status.State, len(a.History))
	}
}

// Without client authentication every client is the one anonymous
// principal, which relay names "": the claim says so (the field is there,
// empty), and contexts are shared by all clients, as tasks are.
func TestClaimOwnerWithoutAuthentication(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	r.call("SendMessage", map[string]any{"message": v10Message("hello", map[string]any{"contextId": "c1"}),
		"configuration": map[string]any{"returnImmediately": true}}, nil)
	c := claim(t, r, "raw")
	if owner, ok := c["owner"]; !ok || owner != "" {
		t.Errorf("claim owner = %v (present: %v), want \"\" present", owner, ok)
	}
}
