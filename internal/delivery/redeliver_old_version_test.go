package delivery

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/outbox"
)

// bodyRecorder is a webhook that records each notification's bodies by id.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies map[string][]string
	order  []string
}

func (r *bodyRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	id := req.Header.Get("A2A-Notification-Id")
	r.mu.Lock()
	if r.bodies == nil {
		r.bodies = map[string][]string{}
	}
	if len(r.bodies[id]) == 0 {
		r.order = append(r.order, id)
	}
	r.bodies[id] = append(r.bodies[id], string(b))
	r.mu.Unlock()
}

// A redelivered notification (an operator's redelivery, a redrive of dead
// letters) of a long task carries the task as it was after its event, as
// its first delivery did and as the previous relay's copy ('s') gave, also
// once the stream has been compacted. (Review: the first version kept a
// checkpoint newer than events still in the stream, and sent the current
// task for them.)
func TestRedeliveredOldEventKeepsItsVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &bodyRecorder{}
	const id = "long"
	fx := newFixtureWith(t, storeConfig{Partitions: 1, EventsMaxLen: 40}, a2a.V03, id, hook)
	store, commit, rdb := fx.store, fx.commit, fx.rdb
	w := mustNew(t, fx.deps(store.consumer(t, outbox.ConsumerConfig{})), Config{})
	drain := func() { fx.drain(t, w) }
	drain()
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: id, Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := commit.Append(ctx, id, working); err != nil {
		t.Fatal(err)
	}
	drain()
	for i := 1; i <= 70; i++ { // versions 3..72, each delivered before the next
		ev := a2a.Event{Kind: a2a.EventArtifact, TaskID: id, Artifact: &a2a.Artifact{ArtifactID: "a" + strconv.Itoa(i),
			Parts: []a2a.Part{{Kind: a2a.PartText, Text: "x"}}}}
		if _, err := commit.Append(ctx, id, ev); err != nil {
			t.Fatal(err)
		}
		drain()
	}
	compactor, err := ingest.NewCompactor(ingest.CompactorDeps{Store: store.compaction, Leader: store, Holder: "test",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, ingest.CompactorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	compactor.RunOnce(ctx)
	if n, _ := rdb.Exists(ctx, store.TaskKeys(id)[3]).Result(); n != 1 {
		t.Fatal("no checkpoint formed: the test needs a trimmed stream")
	}
	artifacts := func(body string) int {
		var snap struct{ Artifacts []json.RawMessage }
		if err := json.Unmarshal([]byte(body), &snap); err != nil {
			t.Fatalf("v0.3 body %s: %v", body, err)
		}
		return len(snap.Artifacts)
	}
	// The notification of the 50th artifact: its event is among the
	// stream's newest 40, and older than the checkpoint (version 72).
	hook.mu.Lock()
	var nid string
	for _, n := range hook.order {
		if artifacts(hook.bodies[n][0]) == 50 {
			nid = n
		}
	}
	hook.mu.Unlock()
	if nid == "" {
		t.Fatal("no notification with 50 artifacts was delivered")
	}
	if err := store.Redeliver(ctx, nid, time.Now()); err != nil {
		t.Fatalf("redeliver %s: %v", nid, err)
	}
	drain()
	hook.mu.Lock()
	bodies := append([]string(nil), hook.bodies[nid]...)
	hook.mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("notification %s POSTed %d times, want 2", nid, len(bodies))
	}
	if got := artifacts(bodies[1]); got != 50 {
		t.Fatalf("redelivered notification %s carries the task with %d artifacts; its first delivery had 50", nid, got)
	}
}
