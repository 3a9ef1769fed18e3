package layout

import (
	"strings"
	"testing"
)

// Every key of a task carries its partition's hash tag, so that one script
// can touch them all on Redis Cluster; lanes of ids that contain ":" do not
// collide.
func TestTaskKeysShareTheirPartitionsTagAndLanesDoNotCollide(t *testing.T) {
	t.Parallel()
	k := New("pfx", 16)
	for _, id := range []string{"a", "task-1", "x:y", "{p}", ""} {
		tag := k.Tag(k.Partition(id))
		tk := k.Task(id)
		for _, key := range []string{tk.Hash, tk.Events, tk.Push, tk.Base, tk.Index, k.Lane(id, "c"), k.Lease(id, "c"),
			k.TaskDeliveries(id), k.Outbox(k.Partition(id)), k.Record(k.Partition(id), "n")} {
			if !strings.HasPrefix(key, tag) {
				t.Errorf("key %q of task %q lacks its partition's tag %q", key, id, tag)
			}
		}
	}
	if a, b := k.Lane("a:b", "c"), k.Lane("a", "b:c"); a == b {
		t.Fatalf("lanes of (a:b, c) and (a, b:c) share the name %q", a)
	}
	if New("", 0) != New("relay", 16) {
		t.Fatal(`New("", 0) is not relay's default prefix and partitions`)
	}
}
