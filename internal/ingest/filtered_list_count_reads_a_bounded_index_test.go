package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
)

// A filtered ListTasks counts its matches (totalSize) among at most
// Config.ListCountMax index entries: one request must not load every task a
// client stores. Paging still returns every match once.
func TestFilteredListCountReadsABoundedIndex(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	keys := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := NewHub()
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: hub}, CommitterConfig{Retention: time.Hour})
	svc := mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: idleAgent{}}, Config{ListCountMax: 10})
	alice := tenant.With(context.Background(), "key:alice")
	for i := range 25 {
		m := a2a.Message{MessageID: fmt.Sprint("m", i), Role: a2a.RoleUser, ContextID: "ctx",
			Parts: []a2a.Part{{Kind: a2a.PartText, Text: "hi"}}}
		if _, err := svc.Send(alice, a2a.SendParams{Dialect: a2a.V10, Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	token := ""
	for page := 0; ; page++ {
		res, err := svc.ListTasks(alice, a2a.ListParams{ContextID: "ctx", PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if page == 0 && res.TotalSize != 10 {
			t.Errorf("first page's totalSize %d, want 10: the matches among the ListCountMax newest entries", res.TotalSize)
		}
		for _, task := range res.Tasks {
			if seen[task.ID] {
				t.Errorf("page %d repeats %s", page, task.ID)
			}
			seen[task.ID] = true
		}
		if token = res.NextPageToken; token == "" || page > 30 {
			break
		}
	}
	if len(seen) != 25 {
		t.Errorf("paging returned %d tasks, want all 25", len(seen))
	}
}
