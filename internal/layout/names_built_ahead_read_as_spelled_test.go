package layout

import (
	"hash/fnv"
	"strconv"
	"testing"
)

// New builds each partition's fixed names once, and a task's own names are
// cut from one string: every name reads as it is spelled out here, for
// each partition and for task ids of every shape, and the names of one
// task carry nothing of another's.
func TestNamesBuiltAheadReadAsSpelled(t *testing.T) {
	t.Parallel()
	for _, parts := range []int{1, 16, 1024} {
		k := New("pfx", parts)
		for p := range parts {
			tag := "pfx:{" + strconv.Itoa(p) + "}:"
			for got, want := range map[string]string{
				k.Tag(p): tag, k.Index(p, ""): tag + "tasks", k.Index(p, "o:1"): tag + "tasks:o:1",
				k.Lanes(p): tag + "lane:", k.RecordPrefix(p): tag + "dl:", k.Deliveries(p): tag + "deliveries",
				k.StatusIndex(p, "pending"): tag + "dl:status:pending", k.StatusIndex(p, "dead"): tag + "dl:status:dead",
				k.Compact(p): tag + "compact", k.Offers(p): tag + "offers", k.Deadlines(p): tag + "deadlines",
				k.Outbox(p): tag + "outbox", k.Usage(p, "o:1", 20512): tag + "usage:20512:o:1", k.Usage(p, "", -3): tag + "usage:-3:",
			} {
				if got != want {
					t.Errorf("partitions %d: got %q, want %q", parts, got, want)
				}
			}
		}
		for _, id := range []string{"", "a", "task-1", "x:y", "{p}", "0f8fad5b-d9cb-469f-a165-70867728950e", "é\x00\xff"} {
			h := fnv.New32a()
			h.Write([]byte(id))
			p := int(h.Sum32() % uint32(parts))
			if got := k.Partition(id); got != p {
				t.Fatalf("partitions %d: task %q in partition %d, want FNV-1a's %d", parts, id, got, p)
			}
			tag := "pfx:{" + strconv.Itoa(p) + "}:"
			want := TaskKeys{Hash: tag + "task:" + id, Events: tag + "events:" + id, Push: tag + "push:" + id,
				Base: tag + "base:" + id, Idempotency: tag + "idem:" + id, Index: tag + "tasks"}
			if got := k.Task(id); got != want {
				t.Errorf("partitions %d: task %q: got %+v, want %+v", parts, id, got, want)
			}
		}
	}
	// A work queue's names, cut from one string, are each its own.
	for _, q := range []string{"", "q", "x:y", "{a}"} {
		wq := New("pfx", 16).WorkQueue(q)
		tag := "pfx:{wq:" + q + "}:"
		if wq.Stream != tag+"work" || wq.LegacyGrants != tag+"grants" || wq.Lease("t1") != tag+"lease:t1" {
			t.Errorf("work queue %q: %+v, lease %q", q, wq, wq.Lease("t1"))
		}
	}
	// Keys made otherwise than by New build every name on demand, alike.
	var bare Keys
	bare.prefix, bare.partitions = "pfx", 16
	k := New("pfx", 16)
	for p := range 16 {
		if bare.Outbox(p) != k.Outbox(p) || bare.Index(p, "") != k.Index(p, "") || bare.StatusIndex(p, "pending") != k.StatusIndex(p, "pending") {
			t.Errorf("partition %d: names built on demand differ from those built ahead", p)
		}
	}
	if got := k.Outbox(16); got != "pfx:{16}:outbox" {
		t.Errorf("a partition past the count: %q", got)
	}
}
