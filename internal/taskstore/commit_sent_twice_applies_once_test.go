package taskstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// A commit whose reply was lost is sent again by the client (go-redis
// retries pipelines): the second run must return the first run's ids and
// write nothing, not apply the events twice.
func TestCommitSentTwiceAppliesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := storeOn(rdb, strings.TrimSuffix(prefix, ":"), 2, Config{})
	c := Commit{TaskID: "twice", Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{"n":1}`)}, UpdatedAt: time.Now()}
	tk := s.k.Task(c.TaskID)
	keys := s.commitKeys(c)
	args, err := s.commitArgs(c, "commit-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := commitScript.Run(ctx, rdb, keys, commitScript.Args(&args)...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	again, err := commitScript.Run(ctx, rdb, keys, commitScript.Args(&args)...).StringSlice()
	if err != nil || !slices.Equal(again, first) || len(again) != 2 {
		t.Fatalf("replay = %v, %v; want the first run's reply %v (an id, then the usage added)", again, err, first)
	}
	if n, _ := rdb.XLen(ctx, tk.Events).Result(); n != 1 {
		t.Fatalf("events after a replay: %d, want 1", n)
	}
	// Another commit from the same stale version is still a conflict.
	if _, err := s.Commit(ctx, c); !errors.Is(err, ErrConflict) {
		t.Fatalf("a different commit from version 0: err = %v, want ErrConflict", err)
	}
}
