package ingest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// Two committers (two relay instances) append to one task at once: each
// one's cached view goes stale, the version check refuses it, and every
// event lands exactly once.
func TestCommittersRaceOnOneTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	keys := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	a := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub()}, CommitterConfig{})
	b := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub()}, CommitterConfig{})
	task := a2a.Task{ID: "race", ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := a.Create(ctx, task, a2a.V03, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, c := range []*Committer{a, b, a, b} {
		wg.Go(func() {
			for j := range 10 {
				id := string(rune('a'+i)) + string(rune('0'+j))
				ev := a2a.Event{Kind: a2a.EventArtifact, TaskID: "race",
					Artifact: &a2a.Artifact{ArtifactID: id, Parts: []a2a.Part{{Kind: a2a.PartText, Text: id}}}}
				if _, err := c.Append(ctx, "race", ev); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	rec, err := store.Load(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	view, err := decodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 41 || len(view.Task.Artifacts) != 40 {
		t.Fatalf("version %d with %d artifacts, want 41 and 40", rec.Version, len(view.Task.Artifacts))
	}
	// A committer whose cache is stale still refuses an illegal change.
	if _, err := a.Append(ctx, "race", a2a.Event{Kind: a2a.EventStatus, TaskID: "race", Status: &a2a.TaskStatus{State: a2a.StateCompleted}}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Append(ctx, "race", a2a.Event{Kind: a2a.EventStatus, TaskID: "race", Status: &a2a.TaskStatus{State: a2a.StateWorking}})
	if _, ok := err.(*a2a.TransitionError); !ok {
		t.Fatalf("stale committer moved a completed task: err = %v", err)
	}
}

// A committer whose cached view is behind the stored task (another
// instance committed since) judges a state change by the stored task: a
// worker's "completed" after its "working" posts landed through another
// relay is applied, not refused as submitted -> completed.
func TestStaleCachedViewDoesNotRefuseALegalChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	keys := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	a := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub()}, CommitterConfig{})
	b := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub()}, CommitterConfig{})
	task := a2a.Task{ID: "stale", ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateSubmitted}}
	if _, err := a.Create(ctx, task, a2a.V03, nil); err != nil { // a caches it as submitted
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "stale", a2a.Event{Kind: a2a.EventStatus, TaskID: "stale", Status: &a2a.TaskStatus{State: a2a.StateWorking}}); err != nil {
		t.Fatal(err)
	}
	v, err := a.Append(ctx, "stale", a2a.Event{Kind: a2a.EventStatus, TaskID: "stale", Status: &a2a.TaskStatus{State: a2a.StateCompleted}})
	if err != nil {
		t.Fatalf("completed after another instance's working: %v", err)
	}
	if st := v.Task.Status.State; st != a2a.StateCompleted {
		t.Fatalf("state %s, want completed", st)
	}
}
