package app

import (
	"encoding/json"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/taskstore"
)

// Every backend that queues its tasks (a worker queue, an upstream agent's
// bridge, the demo agent) names its queue to the Service through the Router, so that the
// commit of each turn records its offer (ingest.Queued): a wrapper that
// hides the queue would leave that backend's tasks to be lost by a crash
// between the commit and the offer.
func TestQueueBackendsNameTheirQueues(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Agent.Backend = "worker:jobs"
	cfg.Agent.Skills = []config.SkillConfig{{ID: "up", Name: "Up", Backend: "http://127.0.0.1:1/"}, {ID: "plain", Name: "Plain"},
		{ID: "demo", Name: "Demo", Backend: "demo"}}
	a := &App{cfg: cfg, log: testLogger(), layout: layout.New("offers", 1)}
	commit, err := ingest.NewCommitter(ingest.CommitterDeps{Store: &taskstore.Store{}, Turns: &taskstore.Turns{}, URLs: &taskstore.URLIndex{}, Hub: ingest.NewHub()}, ingest.CommitterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	router, err := a.agents(commit) // nothing is committed: the pull backend only needs one
	if err != nil {
		t.Fatal(err)
	}
	turn := func(skill string) (a2a.Task, a2a.Message) {
		m := a2a.Message{MessageID: "m1", Role: a2a.RoleUser}
		if skill != "" {
			m.Metadata, _ = json.Marshal(map[string]string{"skill": skill})
		}
		return a2a.Task{ID: "t", History: []a2a.Message{m}}, m
	}
	if q := router.QueueOf(turn("")); q != "jobs" {
		t.Errorf("the worker backend's queue = %q, want jobs", q)
	}
	if q := router.QueueOf(turn("plain")); q != "jobs" {
		t.Errorf("a skill without a backend of its own goes to %q, want jobs", q)
	}
	if q := router.QueueOf(turn("demo")); q != ingest.DemoQueue {
		t.Errorf("the demo backend's queue = %q, want %q", q, ingest.DemoQueue)
	}
	if _, ok := a.upstream[router.QueueOf(turn("up"))]; !ok {
		t.Errorf("the upstream backend's queue = %q, want its bridge's (%v)", router.QueueOf(turn("up")), a.upstream)
	}
}
