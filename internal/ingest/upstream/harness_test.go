package upstream

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/workqueue"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// testLog discards logs unless UPSTREAM_TEST_LOG is set (logging to t
// after a test ends would panic, and background cancels may outlive it).
func testLog() *slog.Logger {
	if os.Getenv("UPSTREAM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// stack is one relay instance: the commit path, the A2A service, and the
// pull backend whose queue "up" the bridge works.
type stack struct {
	rdb    redis.UniversalClient
	store  *taskstore.Store
	svc    *ingest.Service
	commit *ingest.Committer
	pull   *ingest.Pull
	links  Links
	agent  *routeAgent
}

// routeAgent is the app's routing as far as the tests need it: tasks go
// to the "up" queue; a cancel reaches the bridge when onCancel is set.
type routeAgent struct {
	q        ingest.Agent
	onCancel func(string)
}

func (r *routeAgent) Validate(a2a.Message) error              { return nil }
func (r *routeAgent) Start(t a2a.Task, msg a2a.Message) error { return r.q.Start(t, msg) }
func (r *routeAgent) Cancel(id string) {
	r.q.Cancel(id)
	if r.onCancel != nil {
		r.onCancel(id)
	}
}

func newStack(rdb redis.UniversalClient, prefix string, lease time.Duration) *stack {
	p := strings.TrimSuffix(prefix, ":")
	log := testLog()
	keys := layout.New(p, 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := ingest.NewHub()
	committer := mustCommitter(ingest.CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: hub}, ingest.CommitterConfig{})
	ra := &routeAgent{}
	svc := mustService(ingest.ServiceDeps{Store: store, Commit: committer, Hub: hub, Agent: ra, Log: log}, ingest.Config{})
	pull := mustPull(ingest.PullDeps{Queue: workqueue.New(rdb, rdb, nil, layout.New(p, 0)), Commit: committer, Load: svc.GetTask, Log: log},
		ingest.PullConfig{Lease: lease})
	ra.q = pull.Queue("up")
	return &stack{rdb: rdb, store: store, svc: svc, commit: committer, pull: pull, links: NewRedisLinks(rdb, layout.New(p, 2), time.Hour), agent: ra}
}

// startBridge runs a Bridge on the stack's queue with fast test timings;
// the returned func stops it and fails the test unless Run returns soon.
func (s *stack) startBridge(t *testing.T, cfg Config) (*Bridge, func()) {
	t.Helper()
	cfg.Queue = "up"
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	if cfg.RetryInitial == 0 {
		cfg.RetryInitial = 20 * time.Millisecond
	}
	if cfg.ClaimWait == 0 {
		cfg.ClaimWait = 200 * time.Millisecond
	}
	b := mustBridge(Deps{Pull: s.pull, Links: s.links, Log: testLog()}, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Run did not return within 10s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return b, stop
}

// send creates a task on the relay, as a client would.
func (s *stack) send(t *testing.T, text string) a2a.TaskView {
	t.Helper()
	v, err := s.svc.Send(context.Background(), a2a.SendParams{Dialect: a2a.V10, Message: textMessage(text)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func textMessage(text string) a2a.Message {
	return a2a.Message{MessageID: uuid.NewString(), Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}
}

func (s *stack) task(t *testing.T, id string) a2a.Task {
	t.Helper()
	v, err := s.svc.GetTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v.Task
}

// events returns the task's committed event stream.
func (s *stack) events(t *testing.T, id string) []a2a.Event {
	t.Helper()
	msgs, err := s.rdb.XRange(context.Background(), s.store.EventsKey(id), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []a2a.Event
	for _, m := range msgs {
		var ev a2a.Event
		raw, _ := m.Values["e"].(string)
		if err := json.Unmarshal([]byte(raw), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// waitState waits until the relay task is in state st.
func (s *stack) waitState(t *testing.T, id string, st a2a.TaskState) a2a.Task {
	t.Helper()
	var task a2a.Task
	waitFor(t, "task "+id+" to be "+string(st), func() bool {
		task = s.task(t, id)
		return task.Status.State == st
	})
	return task
}

// waitParts waits until artifact a of the relay task has n parts.
func (s *stack) waitParts(t *testing.T, id, a string, n int) {
	t.Helper()
	waitFor(t, "artifact "+a+" to have parts", func() bool {
		for _, art := range s.task(t, id).Artifacts {
			if art.ArtifactID == a {
				return len(art.Parts) == n
			}
		}
		return false
	})
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitUpstream waits until the agent has exactly one task, and returns it.
func waitUpstream(t *testing.T, f *fakeAgent) string {
	t.Helper()
	var ids []string
	waitFor(t, "the upstream agent to get a task", func() bool {
		ids = f.taskIDs()
		return len(ids) > 0
	})
	if len(ids) != 1 {
		t.Fatalf("the agent has %d tasks, want 1", len(ids))
	}
	return ids[0]
}

// texts returns the text of each part.
func texts(parts []a2a.Part) string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "|")
}

// summary renders an event stream compactly: "task", "working:step 1",
// "artifact:a1:one", "artifact+:a1:two" (append), "message".
func summary(evs []a2a.Event) []string {
	var out []string
	for _, ev := range evs {
		switch ev.Kind {
		case a2a.EventStatus:
			s := string(ev.Status.State)
			if ev.Status.Message != nil {
				s += ":" + texts(ev.Status.Message.Parts)
			}
			out = append(out, s)
		case a2a.EventArtifact:
			k := "artifact"
			if ev.Append {
				k += "+"
			}
			out = append(out, k+":"+ev.Artifact.ArtifactID+":"+texts(ev.Artifact.Parts))
		default:
			out = append(out, string(ev.Kind))
		}
	}
	return out
}

// mustCommitter is ingest.NewCommitter for a config the test knows is valid.
func mustBridge(d Deps, cfg Config) *Bridge {
	b, err := New(d, cfg)
	if err != nil {
		panic(err)
	}
	return b
}

func mustService(d ingest.ServiceDeps, cfg ingest.Config) *ingest.Service {
	s, err := ingest.NewService(d, cfg)
	if err != nil {
		panic(err)
	}
	return s
}

func mustPull(d ingest.PullDeps, cfg ingest.PullConfig) *ingest.Pull {
	p, err := ingest.NewPull(d, cfg)
	if err != nil {
		panic(err)
	}
	return p
}

func mustCommitter(d ingest.CommitterDeps, cfg ingest.CommitterConfig) *ingest.Committer {
	c, err := ingest.NewCommitter(d, cfg)
	if err != nil {
		panic(err)
	}
	return c
}

// urlsOn is the URL index of the task store on rdb with keys k, as the app
// wires it beside the store.
func urlsOn(rdb redis.UniversalClient, k layout.Keys) *taskstore.URLIndex {
	u, err := taskstore.NewURLIndex(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)}, taskstore.URLIndexConfig{})
	if err != nil {
		panic(err)
	}
	return u
}

// turnsOn is the turn bookkeeping of the task store on rdb with keys k, as
// the app wires it beside the store.
func turnsOn(rdb redis.UniversalClient, k layout.Keys) *taskstore.Turns {
	u, err := taskstore.NewTurns(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)})
	if err != nil {
		panic(err)
	}
	return u
}

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
