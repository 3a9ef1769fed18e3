package outbox

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// With a task retention shorter than the delivery records', a finished
// task's event stream expires before its notifications' records: its
// commits list them in the task's delivery index (as the previous relay
// did), so that the task still lists its deliveries once it is gone. (The
// task's keys expire by Redis's own expiry: the test waits for it, no
// longer.)
func TestDeliveriesOutliveATaskRetentionShorterThanTheirs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	const taskRetention = 100 * time.Millisecond
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: time.Hour,
		TaskRetention: taskRetention})
	url := []byte(`{"url":"http://127.0.0.1/hook"}`)
	first, err := s.Commit(ctx, taskstore.Commit{TaskID: "t", Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		PushConfigs: map[string][]byte{"a": url}, Events: [][]byte{[]byte(`{"n":1}`)}, Deliver: []bool{true}})
	if err != nil {
		t.Fatal(err)
	}
	// The task ends: its keys expire after the task retention.
	last, err := s.Commit(ctx, taskstore.Commit{TaskID: "t", Version: 1, Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte(`{"n":2}`)}, Deliver: []bool{true}, ExpireAfter: taskRetention})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{s.k.NotificationID("t", first[0], "a"), s.k.NotificationID("t", last[0], "a")}
	slices.Sort(want)
	for s.rdb.Exists(ctx, s.EventsKey("t")).Val() == 1 {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	got := idsOf(listAll(t, s, DeliveryFilter{TaskID: "t", Limit: 1}))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("once the task expired it lists %q, want its deliveries %q", got, want)
	}
}
