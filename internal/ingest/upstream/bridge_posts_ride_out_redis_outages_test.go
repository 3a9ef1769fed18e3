package upstream

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/redistest"
)

// Redis is killed while the agent reports progress and restarted (from its
// AOF) seconds later: the bridge's posts wait for it, and every event the
// agent sent reaches our task once. The lease outlasts the test, so no
// takeover can hide a post the bridge gave up on.
func TestBridgePostsRideOutARedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	f := startAgent(t, agentOptions{streaming: true})
	s := newStack(rdb, "bridge-outage:", time.Hour)
	s.startBridge(t, Config{URL: f.url, Outage: ingest.Outage{For: time.Minute, Initial: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond}})

	v := s.send(t, "hello")
	up := waitUpstream(t, f)
	f.emit(up, state(a2a.StateSubmitted, ""), working("step 1"))
	waitFor(t, "step 1 on our task", func() bool {
		m := s.task(t, v.Task.ID).Status.Message
		return m != nil && texts(m.Parts) == "step 1"
	})
	srv.Kill()
	f.emit(up, working("step 2"), chunk("a1", "Hel", false, false), chunk("a1", "lo", true, true), state(a2a.StateCompleted, "done"))
	time.Sleep(2 * time.Second) // the outage
	srv.Restart()
	s.waitState(t, v.Task.ID, a2a.StateCompleted)
	want := []string{"task", "working:step 1", "working:step 2", "artifact:a1:Hel", "artifact+:a1:lo", "completed:done"}
	if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
}
