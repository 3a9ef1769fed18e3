package webhook

import (
	"strconv"
	"testing"
	"time"
)

func TestReplayCacheBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := newReplayCache(time.Minute, 3)
	for _, id := range []string{"a", "b", "c", "d"} {
		c.add(id, now)
	}
	if c.seen("a", now) || !c.seen("b", now) || !c.seen("d", now) || len(c.until) != 3 {
		t.Fatalf("capacity 3: the oldest must go first; %v", c.until)
	}
	c.add("b", now.Add(30*time.Second)) // remembered already: keeps its time
	if c.seen("b", now.Add(time.Minute)) {
		t.Fatal("b outlived its window")
	}
	later := now.Add(2 * time.Minute)
	c.add("e", later) // evicts the expired
	if len(c.until) != 1 || !c.seen("e", later) {
		t.Fatalf("expired ids kept: %v", c.until)
	}
	c.add("b", later) // added again after expiry
	c.add("f", later)
	c.add("g", later)
	if !c.seen("b", later) || c.seen("e", later) {
		t.Fatalf("re-added id: %v", c.until)
	}

	// Many ids: the queue is compacted and the map stays bounded.
	big := newReplayCache(time.Hour, 1000)
	for i := range 50_000 {
		big.add(strconv.Itoa(i), now.Add(time.Duration(i)*time.Millisecond))
	}
	if len(big.until) != 1000 || len(big.queue)-big.head != 1000 || len(big.queue) > 4096 {
		t.Fatalf("map %d, queue %d (head %d)", len(big.until), len(big.queue), big.head)
	}
	if !big.seen("49999", now.Add(time.Minute)) || big.seen("48999", now.Add(time.Minute)) {
		t.Fatal("kept the wrong ids")
	}

	off := newReplayCache(-1, 10)
	off.add("x", now)
	if off.seen("x", now) {
		t.Fatal("a negative window remembers nothing")
	}
}

func TestReplayInflight(t *testing.T) {
	t.Parallel()
	c := newReplayCache(time.Minute, 10)
	if !c.begin("x") || c.begin("x") {
		t.Fatal("begin twice")
	}
	c.end("x")
	if !c.begin("x") {
		t.Fatal("begin after end")
	}
}

func TestDialectOf(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]Dialect{"1.0": V10, "1": V10, "1.0.1": V10, " 0.3 ": V03, "0.3.0": V03, "0.1": V01,
		"0.1.0": V01, "": "", "0.2": "", "10": "", "1.0x": ""} {
		if got := dialectOf(h); got != want {
			t.Errorf("dialectOf(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestMaxAge(t *testing.T) {
	t.Parallel()
	for cc, want := range map[string]time.Duration{"public, max-age=300": 5 * time.Minute, "max-age=5": time.Minute,
		"max-age=999999": 24 * time.Hour, "no-cache": 5 * time.Minute, "": 5 * time.Minute, `MAX-AGE="600"`: 10 * time.Minute} {
		if got := maxAge(cc); got != want {
			t.Errorf("maxAge(%q) = %v, want %v", cc, got, want)
		}
	}
}
