package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/workqueue"
)

// demoInstance is one relay instance as far as the demo agent goes: its
// own Redis client, the commit path, the pull backend, the demo agent and
// its runner.
type demoInstance struct {
	rdb   *redis.Client
	store *taskstore.Store
	svc   *Service
	demo  *Demo
	cfg   DemoConfig

	mu  sync.Mutex
	ran chan struct{} // closed when Run returned; nil until run
}

// newDemoInstance builds an instance over the Redis at addr; its runner
// is not started (run).
func newDemoInstance(t *testing.T, addr, prefix string, lease time.Duration, cfg DemoConfig, log *slog.Logger) *demoInstance {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	l := layout.New(prefix, 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: l, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := NewHub()
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, l), URLs: urlsOn(rdb, l), Hub: hub}, CommitterConfig{})
	pull := mustPull(PullDeps{Queue: workqueue.New(rdb, rdb, nil, l), Commit: commit, Load: commit.Load, Log: log}, PullConfig{Lease: lease})
	cfg.StepDelay = max(cfg.StepDelay, time.Millisecond)
	demo, err := NewDemo(pull, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	in := &demoInstance{rdb: rdb, store: store, demo: demo, cfg: cfg,
		svc: mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: demo, Log: log}, Config{Outage: cfg.Outage})}
	t.Cleanup(func() {
		in.demo.Close()
		in.wait(t)
		_ = rdb.Close()
	})
	return in
}

// run starts the instance's runner.
func (in *demoInstance) run() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.ran = make(chan struct{})
	go func(ran chan struct{}) {
		defer close(ran)
		_ = in.demo.Run(context.Background())
	}(in.ran)
}

// wait waits for the runner to return.
func (in *demoInstance) wait(t *testing.T) {
	in.mu.Lock()
	ran := in.ran
	in.mu.Unlock()
	if ran == nil {
		return
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Errorf("the demo runner did not return within 10s of Close")
	}
}

// die ends the instance as a crash would: its connections drop, then its
// goroutines stop, and nothing it held is handed back.
func (in *demoInstance) die(t *testing.T) {
	_ = in.rdb.Close()
	in.demo.Close()
	in.wait(t)
}

// send starts a demo task with the given demo options.
func (in *demoInstance) send(t *testing.T, text string, opts map[string]any) string {
	t.Helper()
	md, _ := json.Marshal(map[string]any{"demo": opts})
	v, err := in.svc.Send(context.Background(), a2a.SendParams{Dialect: a2a.V10, Message: a2a.Message{
		MessageID: fmt.Sprintf("m-%d", time.Now().UnixNano()), Role: a2a.RoleUser,
		Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}, Metadata: md}})
	if err != nil {
		t.Fatal(err)
	}
	return v.Task.ID
}

// task reads a task as stored (zero on error, e.g. while Redis is down).
func (in *demoInstance) task(id string) a2a.Task {
	v, err := in.svc.GetTask(context.Background(), id)
	if err != nil {
		return a2a.Task{}
	}
	return v.Task
}

// waitFor polls cond until it holds, failing t after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stepOfTask returns the working step a task's status names, or 0.
func stepOfTask(task a2a.Task) int {
	if task.Status.Message == nil || len(task.Status.Message.Parts) == 0 {
		return 0
	}
	var i, n int
	if _, err := fmt.Sscanf(task.Status.Message.Parts[0].Text, "working: step %d of %d", &i, &n); err != nil {
		return 0
	}
	return i
}

// checkEvents reads the committed events of a task and checks that the
// demo emitted each of its events once and in order: the steps 1..steps,
// chunks artifact chunks, then the end state; the seq of the metadata
// counts 1, 2, ... It returns the events.
func checkEvents(t *testing.T, in *demoInstance, id string, steps, chunks int, end a2a.TaskState) []a2a.Event {
	t.Helper()
	entries, err := in.store.ReadEvents(context.Background(), in.rdb, id, "0", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var evs []a2a.Event
	var got []string
	for _, e := range entries {
		var ev a2a.Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind == a2a.EventTask || ev.Kind == a2a.EventMessage {
			continue
		}
		evs = append(evs, ev)
		switch {
		case ev.Kind == a2a.EventArtifact:
			got = append(got, "chunk")
		case ev.Status.Message != nil && strings.HasPrefix(ev.Status.Message.Parts[0].Text, "working: step"):
			got = append(got, ev.Status.Message.Parts[0].Text)
		default:
			got = append(got, string(ev.Status.State))
		}
	}
	var want []string
	for i := 1; i <= steps; i++ {
		want = append(want, fmt.Sprintf("working: step %d of %d", i, steps))
	}
	for range chunks {
		want = append(want, "chunk")
	}
	want = append(want, string(end))
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("task %s: events\n%s\nwant\n%s", id, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, ev := range evs {
		var md struct{ Seq int }
		if err := json.Unmarshal(ev.Metadata, &md); err != nil || md.Seq != i+1 {
			t.Fatalf("task %s: event %d has metadata %s, want seq %d", id, i, ev.Metadata, i+1)
		}
	}
	return evs
}

// logWatch is a slog handler that remembers the messages logged.
type logWatch struct {
	mu   *sync.Mutex
	msgs map[string]int
}

func newLogWatch() logWatch { return logWatch{mu: &sync.Mutex{}, msgs: map[string]int{}} }

func (w logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w logWatch) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	w.msgs[r.Message]++
	w.mu.Unlock()
	return nil
}
func (w logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w logWatch) WithGroup(string) slog.Handler      { return w }

func (w logWatch) seen(msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.msgs[msg] > 0
}
