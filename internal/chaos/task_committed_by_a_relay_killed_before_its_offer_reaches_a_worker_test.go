package chaos

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/failpoint"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/worker"
)

// A relay killed right after the commit of a new worker task, before the
// task's offer to its work queue (the two steps it took apart before the
// offer was recorded with the commit), leaves a task that a worker still
// gets: another relay on the same Redis offers it within
// RELAY_WORKER_REOFFER_AFTER (and the leader's hand-over). The relay under
// test is built with the failpoint tag and killed by its failpoint
// (internal/failpoint).
func TestTaskCommittedByARelayKilledBeforeItsOfferReachesAWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relay: skipped with -short")
	}
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	bin, err := BuildTags(ctx, dir, raceEnabled, "failpoint")
	if err != nil {
		t.Fatal(err)
	}
	const token = "worker-token-0123456789"
	env := []string{"RELAY_REDIS_URL=redis://" + srv.Addr(), "RELAY_AUTH=none", "RELAY_RATE_LIMIT=0",
		"RELAY_AGENT_BACKEND=worker:jobs", "RELAY_WORKER_TOKENS=" + token, "RELAY_WORKER_REOFFER_AFTER=1s", "RELAY_LOG_LEVEL=info"}
	relay := func(name string, extra ...string) *Relay {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		r := &Relay{Name: name, Bin: bin, Addr: addr, LogPath: filepath.Join(dir, name+".log"), Env: append(env, extra...)}
		t.Cleanup(func() {
			r.Kill()
			if t.Failed() {
				t.Logf("last lines of %s:\n%s", name, r.Tail(30))
			}
		})
		return r
	}
	doomed := relay("doomed", failpoint.Env+"="+failpoint.AfterCommit)
	if err := doomed.Start(ctx); err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m-1",
		"parts":[{"text":"committed, never offered"}]},"configuration":{"returnImmediately":true}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, doomed.URL(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the send was answered (%s): the relay did not die at its failpoint", resp.Status)
	}
	select {
	case <-doomed.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("the relay did not die at its failpoint")
	}
	if c := doomed.Crashes(); len(c) != 1 {
		t.Fatalf("crashes of the doomed relay: %v, want its death at the failpoint", c)
	}
	// What it left: the task committed with the record of its offer, and
	// no offer in the queue.
	k := layout.New("", 0)
	records := func() int64 {
		var n int64
		for p := range k.Partitions() {
			c, err := rdb.ZCard(ctx, k.Offers(p)).Result()
			if err != nil {
				t.Fatal(err)
			}
			n += c
		}
		return n
	}
	if n := records(); n != 1 {
		t.Fatalf("%d offer records after the crash, want 1", n)
	}
	if n, err := rdb.XLen(ctx, k.WorkQueue("jobs").Stream).Result(); err != nil && !errors.Is(err, redis.Nil) || n != 0 {
		t.Fatalf("work queue after the crash: %d entries (%v), want none", n, err)
	}

	survivor := relay("survivor")
	if err := survivor.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w := &worker.Client{BaseURL: survivor.Base(), Token: token, Queue: "jobs", WorkerID: "w1"}
	deadline := time.Now().Add(30 * time.Second) // 1s after the commit, plus the dead leader's lease
	var job *worker.Job
	for job == nil && time.Now().Before(deadline) {
		if job, err = w.Claim(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if job == nil {
		t.Fatal("no worker got the task the killed relay committed")
	}
	if got := job.Message.Text(); got != "committed, never offered" {
		t.Fatalf("the worker got %q, want the killed relay's task", got)
	}
	if err := job.Post(ctx, job.StatusEvent(worker.StateWorking, ""), job.StatusEvent(worker.StateCompleted, "done")); err != nil {
		t.Fatal(err)
	}
	if n := records(); n != 0 {
		t.Fatalf("%d offer records once the task was offered, want none", n)
	}
}
