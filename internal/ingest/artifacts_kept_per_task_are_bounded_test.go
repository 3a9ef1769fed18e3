package ingest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A task keeps at most MaxArtifacts artifacts: an event that adds one more
// is refused with a *a2a.FieldError and commits nothing; chunks appended to
// an artifact it has, and replacing one, still pass.
func TestArtifactsKeptPerTaskAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	keys := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	c := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{MaxArtifacts: 2}})
	if _, err := c.Create(ctx, a2a.Task{ID: "arts", ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateWorking}}, a2a.V03, nil); err != nil {
		t.Fatal(err)
	}
	artifact := func(id string, appendParts bool) a2a.Event {
		return a2a.Event{Kind: a2a.EventArtifact, TaskID: "arts", Append: appendParts,
			Artifact: &a2a.Artifact{ArtifactID: id, Parts: []a2a.Part{{Kind: a2a.PartText, Text: id}}}}
	}
	for i := range 2 {
		if _, err := c.Append(ctx, "arts", artifact("a"+strconv.Itoa(i), false)); err != nil {
			t.Fatal(err)
		}
	}
	before, err := store.Load(ctx, "arts")
	if err != nil {
		t.Fatal(err)
	}
	var fe *a2a.FieldError
	if _, err := c.Append(ctx, "arts", artifact("a2", false)); !errors.As(err, &fe) || fe.Field != "artifact.artifactId" {
		t.Fatalf("a third artifact: %v, want a FieldError on artifact.artifactId", err)
	}
	if after, err := store.Load(ctx, "arts"); err != nil || after.Version != before.Version {
		t.Fatalf("the refused artifact committed version %d (%v)", after.Version, err)
	}
	if _, err := c.Append(ctx, "arts", artifact("a1", true), artifact("a0", false)); err != nil {
		t.Fatalf("a chunk and a replacement of artifacts the task has: %v", err)
	}
}
