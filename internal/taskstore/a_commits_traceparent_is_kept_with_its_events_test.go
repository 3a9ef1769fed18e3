package taskstore

import (
	"context"
	"testing"
)

// A commit's traceparent is kept with each of its events (the stream
// entry's 't') and with the outbox entry that carries an event ('p'), so
// that their deliveries join the turn's trace; a commit without one (tracing
// off) stores nothing of it.
func TestACommitsTraceparentIsKeptWithItsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, traced := range []bool{true, false} {
		s, rdb, _ := newStore(t, 4)
		s.outbox = true
		id := "task-traced"
		c := Commit{TaskID: id, Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}, Deliver: []bool{true, true},
			PushConfigs: map[string][]byte{"c": []byte(`{}`)}, UpdatedAt: t0}
		if traced {
			c.TraceParent = tp
		}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		want := ""
		if traced {
			want = tp
		}
		events, err := rdb.XRange(ctx, s.k.Task(id).Events, "-", "+").Result()
		if err != nil || len(events) != 2 {
			t.Fatalf("events %v, %v", events, err)
		}
		for _, m := range events {
			got, has := m.Values["t"].(string)
			if got != want || has != traced {
				t.Fatalf("traced=%v: event entry %v, want traceparent %q", traced, m.Values, want)
			}
		}
		entries, err := rdb.XRange(ctx, s.k.Outbox(s.k.Partition(id)), "-", "+").Result()
		if err != nil || len(entries) != 2 {
			t.Fatalf("outbox %v, %v", entries, err)
		}
		for _, m := range entries {
			got, has := m.Values["p"].(string)
			if got != want || has != traced {
				t.Fatalf("traced=%v: outbox entry %v, want traceparent %q", traced, m.Values, want)
			}
		}
	}
}
