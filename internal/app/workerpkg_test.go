package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/worker"
)

// The public worker package against a real relay: a worker claims a task
// and drops dead mid-task (no release, no heartbeat); Run in a second
// worker gets it once the lease expires and completes it.
func TestWorkerPackageAgainstRelay(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil) // lease 2s
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("shout this", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)

	dead := &worker.Client{BaseURL: r.url, Token: testWorkerToken, Queue: "jobs", WorkerID: "dies"}
	ctx := context.Background()
	j, err := dead.Claim(ctx, 5*time.Second)
	if err != nil || j == nil || j.TaskID != res.Task.ID {
		t.Fatalf("claim = %+v, %v", j, err)
	}
	if err := j.Status(ctx, worker.StateWorking, "halfway"); err != nil {
		t.Fatal(err)
	}
	// The worker dies here.

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	attempts := make(chan int, 1)
	live := &worker.Client{BaseURL: r.url, Token: testWorkerToken, Queue: "jobs", WorkerID: "lives"}
	go live.Run(runCtx, func(ctx context.Context, j *worker.Job) error {
		attempts <- j.Attempt
		if err := j.Artifact(ctx, "out", strings.ToUpper(j.Message.Text()), false, true); err != nil {
			return err
		}
		return j.Complete(ctx, "done")
	})
	select {
	case n := <-attempts:
		if n != 2 {
			t.Fatalf("the live worker got attempt %d, want 2", n)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the dead worker's task was never handed to the live one")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got v10Task
		r.call("GetTask", map[string]any{"id": res.Task.ID}, &got)
		if got.Status.State == "TASK_STATE_COMPLETED" {
			if len(got.Artifacts) != 1 || *got.Artifacts[0].Parts[0].Text != "SHOUT THIS" {
				t.Fatalf("artifacts = %+v", got.Artifacts)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task is %s", got.Status.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := j.Status(ctx, worker.StateWorking, "zombie"); err == nil {
		t.Fatal("the dead worker's lease still works")
	}
}
