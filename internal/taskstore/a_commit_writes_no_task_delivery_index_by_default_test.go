package taskstore

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A commit names each notification's config in its event's stream entry,
// whence the task's deliveries are listed, and writes nothing to the task's
// delivery index: no ZADD but the task list's (and, on the lanes path, the
// pending status index's, one per notification), no PEXPIRE (INFO
// commandstats of a Redis of the test's own). With a task retention
// shorter than the records' (the stream may expire before them), it lists
// them in the index instead, as the previous relay did.
func TestACommitWritesNoTaskDeliveryIndexByDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		outbox        bool
		taskRetention time.Duration
		zadds         int // per commit of 2 events to 2 configs
		indexed       bool
	}{
		{"outbox", true, 0, 1, false},
		{"lanes", false, 0, 1 + 4, false},
		{"outbox, shorter task retention", true, time.Hour, 1 + 4, true},
		{"lanes, shorter task retention", false, time.Hour, 1 + 4 + 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := redistest.Start(t)
			rdb := srv.Client()
			s := must(New(Deps{RDB: rdb, Keys: layout.New("p", 1), Batch: groupcommit.New(rdb)}, Config{Outbox: tc.outbox, TaskRetention: tc.taskRetention,
				DeliveryRetention: 2 * time.Hour}))
			cfgs := map[string][]byte{"a": []byte(`{}`), "b": []byte(`{}`)}
			// The first commit stores the configs; the second is the one counted.
			c := Commit{TaskID: "t", Snapshot: []byte(`{}`), UpdatedAt: time.Now(), PushConfigs: cfgs}
			if _, err := s.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			c = Commit{TaskID: "t", Version: 1, Snapshot: []byte(`{"v":2}`), UpdatedAt: time.Now(),
				Events: [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)}, Deliver: []bool{true, true}}
			ids, err := s.Commit(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			calls := redistest.CommandCalls(t, rdb)
			if calls["zadd"] != tc.zadds {
				t.Errorf("the commit ran %d ZADDs, want %d", calls["zadd"], tc.zadds)
			}
			if !tc.indexed && calls["pexpire"] != 0 {
				t.Errorf("the commit ran %d PEXPIREs, want none", calls["pexpire"])
			}
			if n := rdb.Exists(ctx, s.k.TaskDeliveries("t")).Val(); (n == 1) != tc.indexed {
				t.Errorf("the task's delivery index exists: %v, want %v", n == 1, tc.indexed)
			}
			for _, id := range ids {
				es, err := rdb.XRange(ctx, s.k.Task("t").Events, id, id).Result()
				if err != nil || len(es) != 1 {
					t.Fatalf("entry %s: %v (%v)", id, es, err)
				}
				named := layout.DecodeEventEntry(es[0].Values).Configs
				if tc.indexed && len(named) != 0 {
					t.Errorf("entry %s names %q, listed in the index already", id, named)
				}
				if !tc.indexed && (len(named) != 2 || named[0] == named[1]) {
					t.Errorf("entry %s names %q, want both configs", id, named)
				}
			}
		})
	}
}
