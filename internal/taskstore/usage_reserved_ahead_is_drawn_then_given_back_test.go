package taskstore

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Bytes reserved ahead (an agent's estimated output) are counted with the
// commit that reserves them; the task's later commits draw what they
// store from the reserve, so it is not counted twice; the commit that
// ends the turn gives back what is left, and the usage goes down by it.
// The reserve is read back with the task (Record.Reserve), as the next
// commit's PrevReserve.
func TestUsageReservedAheadIsDrawnThenGivenBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t, 4)
	now := time.Now()
	usage := func(stage string, want int64) {
		t.Helper()
		if u, err := s.Usage(ctx, "alice", now); err != nil || u.Bytes != want {
			t.Fatalf("%s: usage %+v, %v; want %d bytes", stage, u, err, want)
		}
	}
	reserve := func(stage string, want int64) {
		t.Helper()
		if rec, err := s.Load(ctx, "t1"); err != nil || rec.Reserve != want || rec.Fields[fieldReserve] != "" {
			t.Fatalf("%s: record reserve %d (fields %v), %v; want %d", stage, rec.Reserve, rec.Fields, err, want)
		}
	}
	c := Commit{TaskID: "t1", Snapshot: []byte(strings.Repeat("s", 100)), UpdatedAt: now, Owner: "alice", Reserve: 10_000}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	usage("created with a reserve of 10,000", 100+10_000)
	reserve("created", 10_000)
	// The agent stores 3,000 bytes: drawn from the reserve, not counted again.
	step := Commit{TaskID: "t1", Version: 1, Snapshot: []byte(strings.Repeat("s", 100)), PrevSnapshotLen: 100,
		Events: [][]byte{[]byte(strings.Repeat("e", 3000))}, UpdatedAt: now, Owner: "alice", PrevReserve: 10_000}
	if _, err := s.Commit(ctx, step); err != nil {
		t.Fatal(err)
	}
	usage("after 3,000 bytes drawn", 100+10_000)
	reserve("after 3,000 bytes drawn", 7_000)
	// The turn ends: the 7,000 bytes left are given back.
	end := Commit{TaskID: "t1", Version: 2, Snapshot: []byte(strings.Repeat("s", 100)), PrevSnapshotLen: 100,
		Events: [][]byte{[]byte(strings.Repeat("e", 500))}, UpdatedAt: now, Owner: "alice", PrevReserve: 7_000, Release: true}
	if _, err := s.Commit(ctx, end); err != nil {
		t.Fatal(err)
	}
	usage("after the turn ended", 100+3000+500)
	reserve("after the turn ended", 0)
	// A next turn past its reserve: what is beyond it is counted.
	next := Commit{TaskID: "t1", Version: 3, Snapshot: []byte(strings.Repeat("s", 100)), PrevSnapshotLen: 100,
		Events: [][]byte{[]byte(strings.Repeat("m", 200))}, UpdatedAt: now, Owner: "alice", Reserve: 1000}
	over := Commit{TaskID: "t1", Version: 4, Snapshot: []byte(strings.Repeat("s", 100)), PrevSnapshotLen: 100,
		Events: [][]byte{[]byte(strings.Repeat("e", 1500))}, UpdatedAt: now, Owner: "alice", PrevReserve: 1000, Release: true}
	for _, c := range []Commit{next, over} {
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	usage("after a turn that stored more than its reserve", 100+3000+500+200+1500)
	reserve("after a turn that stored more than its reserve", 0)
}
