package layout

import (
	"reflect"
	"slices"
	"strconv"
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
		for _, key := range append(tk.Own(), tk.Index, k.Lane(id, "c"), k.Lease(id, "c"),
			k.TaskDeliveries(id), k.Outbox(k.Partition(id)), k.Record(k.Partition(id), "n"),
			k.Usage(k.Partition(id), "client:a", 7), k.Offers(k.Partition(id)), k.Deadlines(k.Partition(id))) {
			if !strings.HasPrefix(key, tag) {
				t.Errorf("key %q of task %q lacks its partition's tag %q", key, id, tag)
			}
		}
	}
	// The idempotency record is a key of its own: no other key of the task
	// or its partition has its name.
	for _, id := range []string{"a", "tasks", "x:y"} {
		tk := k.Task(id)
		idem := tk.Idempotency
		p := k.Partition(id)
		for _, other := range []string{tk.Hash, tk.Events, tk.Push, tk.Base, tk.Index, k.Index(p, id), k.TaskDeliveries(id),
			k.Outbox(p), k.Compact(p), k.Deliveries(p), k.Record(p, id), k.Lane(id, "c"), k.Offers(p)} {
			if idem == other {
				t.Errorf("Task(%q).Idempotency = %q names another key of the task", id, idem)
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

// A task's key set is built in one place, Keys.Task: every key of the task
// alone is a field of TaskKeys and listed by Own (which operators and
// tests use to find all of a task), its idempotency record included; the
// partition's index is the one field Own leaves out.
func TestTaskKeysListEveryKeyOfTheTask(t *testing.T) {
	t.Parallel()
	tk := New("pfx", 16).Task("t1")
	own := tk.Own()
	v := reflect.ValueOf(tk)
	for i := range v.NumField() {
		name, key := v.Type().Field(i).Name, v.Field(i).String()
		if name == "Index" {
			if slices.Contains(own, key) {
				t.Errorf("Own lists the partition's index %q", key)
			}
			continue
		}
		if !slices.Contains(own, key) {
			t.Errorf("Own leaves out TaskKeys.%s (%q)", name, key)
		}
	}
	if len(own) != v.NumField()-1 || !slices.Contains(own, "pfx:{"+strconv.Itoa(New("pfx", 16).Partition("t1"))+"}:idem:t1") {
		t.Errorf("Own = %q: want each field but Index once, the idempotency record among them", own)
	}
}

// A script given a prefix appends an id to it, and names the same key as Go
// does: Lane is LanePrefix plus the config id, and LanePrefix starts with its
// partition's Lanes; Record and LegacyAttempts are their prefixes plus the
// notification id.
func TestPrefixesPlusAnIdAreTheKeys(t *testing.T) {
	t.Parallel()
	k := New("pfx", 16)
	for _, id := range []string{"a", "task-1", "x:y", "{p}", ""} {
		p := k.Partition(id)
		for _, c := range []string{"c", "a:b", ""} {
			if got, want := k.LanePrefix(id)+c, k.Lane(id, c); got != want {
				t.Errorf("LanePrefix(%q) + %q = %q, want Lane %q", id, c, got, want)
			}
		}
		if !strings.HasPrefix(k.LanePrefix(id), k.Lanes(p)) {
			t.Errorf("LanePrefix(%q) = %q does not start with its partition's Lanes %q", id, k.LanePrefix(id), k.Lanes(p))
		}
		if got, want := k.RecordPrefix(p)+"3.ab", k.Record(p, "3.ab"); got != want {
			t.Errorf("RecordPrefix(%d) + id = %q, want Record %q", p, got, want)
		}
		if got, want := k.LegacyAttemptsPrefix(p)+"3.ab", k.LegacyAttempts(p, "3.ab"); got != want {
			t.Errorf("LegacyAttemptsPrefix(%d) + id = %q, want LegacyAttempts %q", p, got, want)
		}
	}
}
