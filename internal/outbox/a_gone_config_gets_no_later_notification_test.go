package outbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// A 410 disables its config, on the outbox path and on the lanes path
// alike: the next commit of the task makes no notification for it, though
// the commit takes the task's config ids from the task hash (a list that
// the 410 must drop with the config).
func TestAGoneConfigGetsNoLaterNotification(t *testing.T) {
	t.Parallel()
	for _, outbox := range []bool{true, false} {
		ctx := context.Background()
		s, ids := laneFixtureWith(t, 1, storeConfig{Outbox: outbox}) // task "run" at version 1, config c1
		if err := s.SetPushConfig(ctx, "", "run", "c2", []byte(`{"url":"http://127.0.0.1/hook2"}`), "", 16); err != nil {
			t.Fatal(err)
		}
		commit := func(v int64) string {
			t.Helper()
			got, err := s.Commit(ctx, taskstore.Commit{TaskID: "run", Version: v, Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
				Events: [][]byte{[]byte(`{"v":1}`)}, Deliver: []bool{true}})
			if err != nil {
				t.Fatal(err)
			}
			return got[0]
		}
		second := commit(1) // notifies c1 and c2: the task's list holds both
		if outbox {
			if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
				t.Fatal("not owner")
			}
			es, err := s.ReadOutbox(ctx, 0, "0-0", 100, 0)
			if err != nil || len(es) != 3 {
				t.Fatalf("outbox holds %d entries (%v), want c1, then c1 and c2", len(es), err)
			}
			now := time.Now()
			if _, err := s.FinishOutbox(ctx, 0, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Gone, Attempt: []byte(`{}`),
				Now: now, Reason: "410"}); err != nil {
				t.Fatal(err)
			}
		} else {
			ts, err := s.ReadTokens(ctx, 0, "w1", 10, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(ts, func(t Token) bool { return t.ConfigID == "c1" })
			if i < 0 {
				t.Fatalf("tokens %v: none of c1", ts)
			}
			tok := ts[i]
			h, _, _ := s.Begin(ctx, tok, "w1", time.Minute)
			if h.EventID != ids[0] {
				t.Fatalf("began %+v, want c1's first notification", h)
			}
			now := time.Now()
			if _, err := s.FinishToken(ctx, tok, h, Finish{Outcome: Gone, Attempt: []byte(`{}`), Now: now, First: now,
				Lease: time.Minute, Consumer: "w1", Reason: "410"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.PushConfig(ctx, "run", "c1"); err == nil {
			t.Fatal("c1 is still stored after its 410")
		}
		third := commit(2)
		var cfgs []string
		for _, lane := range []string{"c1", "c2"} {
			if outbox {
				continue
			}
			for _, h := range s.rdb.LRange(ctx, s.k.Lane("run", lane), 0, -1).Val() {
				if len(h) > len(third) && h[:len(third)] == third {
					cfgs = append(cfgs, lane)
				}
			}
		}
		if outbox {
			msgs := s.rdb.XRange(ctx, s.k.Outbox(0), "-", "+").Val()
			for _, m := range msgs {
				if m.Values["e"] == third {
					cfgs = append(cfgs, m.Values["c"].(string))
				}
			}
		}
		if !slices.Equal(cfgs, []string{"c2"}) {
			t.Fatalf("outbox %v: the commit after c1's 410 (second event %s) notified %v, want [c2]", outbox, second, cfgs)
		}
	}
}
