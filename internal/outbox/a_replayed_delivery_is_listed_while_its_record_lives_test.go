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

// A replay gives a notification's record a retention from the replay, which
// may outlive the task's event stream (it expires a task retention after
// the task's last commit): the replay then lists the notification in the
// task's delivery index too, under its event's ms, so that the task lists
// it once while both live and still once the stream has expired. On both
// delivery paths.
func TestAReplayedDeliveryIsListedWhileItsRecordLives(t *testing.T) {
	t.Parallel()
	for _, outbox := range []bool{true, false} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[outbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb, prefix := redistest.New(t)
			s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, Outbox: outbox,
				DeliveryRetention: time.Hour, TaskRetention: time.Hour})
			c := taskstore.Commit{TaskID: "done", Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{"n":1}`)}, Deliver: []bool{true},
				PushConfigs: map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}, UpdatedAt: time.Now(), ExpireAfter: time.Hour}
			ids, err := s.Commit(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			nid := s.k.NotificationID("done", ids[0], "c1")
			events := s.EventsKey("done")
			// 50 minutes later: the record expired (or was never made), the
			// task's keys have 10 minutes left.
			rdb.Del(ctx, s.k.Record(0, nid))
			rdb.PExpire(ctx, events, 10*time.Minute)
			if res, err := s.Requeue(ctx, "done", []Requeued{{EventID: ids[0], ConfigID: "c1"}}, time.Now()); err != nil || res.Queued != 1 {
				t.Fatalf("Requeue = %+v, %v", res, err)
			}
			if got := listAll(t, s, DeliveryFilter{TaskID: "done", Limit: 10}); !slices.Equal(idsOf(got), []string{nid}) {
				t.Fatalf("after the replay the task lists %q, want %q once", idsOf(got), nid)
			}
			rdb.Del(ctx, events) // the task expired; the replayed record lives on
			if n := rdb.Exists(ctx, s.k.Record(0, nid)).Val(); n != 1 {
				t.Fatal("the replayed record is gone")
			}
			if got := listAll(t, s, DeliveryFilter{TaskID: "done", Limit: 10}); !slices.Equal(idsOf(got), []string{nid}) {
				t.Fatalf("once the task expired it lists %q, want the replayed %q", idsOf(got), nid)
			}
		})
	}
}
