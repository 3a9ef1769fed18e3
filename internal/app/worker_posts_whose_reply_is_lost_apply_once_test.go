package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/worker"
)

// loseFirstAnswers passes requests to the relay, but loses the answer of
// the first send of each event post: the relay applied it, and the worker
// sees the connection drop. It records the Idempotency-Key of every post.
type loseFirstAnswers struct {
	mu   sync.Mutex
	seen map[string]bool
	keys []string
}

func (l *loseFirstAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/events") {
		return resp, err
	}
	key := req.Header.Get("Idempotency-Key")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	if l.seen[key] {
		return resp, nil
	}
	l.seen[key] = true
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, io.ErrUnexpectedEOF // the connection closed before the answer
}

// A worker (the public worker package) whose event posts all lose their
// first answer, the final one included: each post is sent again under the
// same Idempotency-Key, the relay commits its events once, and the retry of
// the final post gets the first answer (completed), not lease_lost.
func TestWorkerPostsWhoseReplyIsLostApplyOnce(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("go", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	lose := &loseFirstAnswers{seen: map[string]bool{}}
	c := &worker.Client{BaseURL: r.url, Token: testWorkerToken, Queue: "jobs", HTTP: &http.Client{Transport: lose}, Logger: testLogger()}
	ctx := context.Background()
	j, err := c.Claim(ctx, 5*time.Second)
	if err != nil || j == nil {
		t.Fatalf("claim: %v, %v", j, err)
	}
	before := len(readEvents(t, r, j.TaskID))
	if err := j.Status(ctx, worker.StateWorking, ""); err != nil {
		t.Fatal(err)
	}
	if err := j.Artifact(ctx, "out", "AB", false, false); err != nil {
		t.Fatal(err)
	}
	if err := j.Artifact(ctx, "out", "CD", true, true); err != nil {
		t.Fatal(err)
	}
	if err := j.Complete(ctx, "done"); err != nil {
		t.Fatalf("the final post, sent again after its answer was lost: %v", err)
	}
	if err := j.Err(); err != worker.ErrDone {
		t.Fatalf("job: %v, want ErrDone", err)
	}
	evs := readEvents(t, r, j.TaskID)[before:]
	if len(evs) != 4 || evs[3].Status == nil || evs[3].Status.State != "completed" {
		t.Fatalf("%d events committed (%+v), want working, the 2 chunks and completed, once each", len(evs), evs)
	}
	var got v10Task
	r.call("GetTask", map[string]any{"id": j.TaskID}, &got)
	if got.Status.State != "TASK_STATE_COMPLETED" || len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != 2 {
		t.Fatalf("task %s with artifacts %+v, want completed with one artifact of 2 parts", got.Status.State, got.Artifacts)
	}
	lose.mu.Lock()
	defer lose.mu.Unlock()
	if len(lose.keys) != 8 || len(lose.seen) != 4 {
		t.Fatalf("posts sent with keys %q: want 4 posts, each sent twice under one key", lose.keys)
	}
	for i := 0; i < 8; i += 2 {
		if lose.keys[i] == "" || lose.keys[i] != lose.keys[i+1] {
			t.Fatalf("post %d sent with keys %q then %q", i/2, lose.keys[i], lose.keys[i+1])
		}
	}
}

// The Idempotency-Key over plain HTTP: a replay answers 200 with the first
// body and Idempotent-Replayed: true; the key with other events is 422
// idempotency_key_reused; a malformed key is 400 bad_request; nothing but
// the first post is committed.
func TestIdempotencyKeyOverHTTP(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("go", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	c := claim(t, r, "w")
	taskID := c["taskId"].(string)
	before := len(readEvents(t, r, taskID))
	send := func(key string, events ...any) (int, string, string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"leaseId": c["leaseId"], "events": events})
		req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/tasks/"+taskID+"/events", strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer "+testWorkerToken)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), string(raw)
	}
	status, replayed, first := send("k-1", artifactEvent("x", false, false))
	if status != 200 || replayed != "" {
		t.Fatalf("first post: %d (replayed %q) %s", status, replayed, first)
	}
	status, replayed, again := send("k-1", artifactEvent("x", false, false))
	if status != 200 || replayed != "true" || again != first {
		t.Fatalf("replay: %d (replayed %q) %s, want 200 (true) %s", status, replayed, again, first)
	}
	status, _, body := send("k-1", artifactEvent("y", false, false))
	if status != 422 || !strings.Contains(body, `"code":"idempotency_key_reused"`) {
		t.Fatalf("the key with other events: %d %s, want 422 idempotency_key_reused", status, body)
	}
	status, _, body = send(strings.Repeat("k", 256), artifactEvent("z", false, false))
	if status != 400 || !strings.Contains(body, `"code":"bad_request"`) || !strings.Contains(body, "Idempotency-Key") {
		t.Fatalf("a 256-character key: %d %s, want 400 bad_request", status, body)
	}
	if n := len(readEvents(t, r, taskID)) - before; n != 1 {
		t.Fatalf("%d events committed, want 1", n)
	}
}
