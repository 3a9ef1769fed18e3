package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/ingest/upstream"
	"github.com/a2arelay/relay/internal/workqueue"
)

// maxClaims bounds the worker claims long-polling at once on one instance
// (each holds a connection of the blocking pool).
const maxClaims = 128

// agentClaims is room in the blocking pool for the claims of the
// in-process agents (the demo runner's, the upstream bridges').
const agentClaims = 8

// agents builds the agent backends the configuration routes to and the
// Router in front of them.
func (a *App) agents(commit *ingest.Committer) (*ingest.Router, error) {
	claims := workqueue.New(a.rdb, a.streamRDB, a.batch, a.layout)
	a.claims = claims
	var err error
	if a.pull, err = ingest.NewPull(ingest.PullDeps{Queue: claims, Commit: commit, Load: commit.Load, Log: a.log},
		ingest.PullConfig{Lease: a.cfg.WorkerLease}); err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	a.demo, err = ingest.NewDemo(a.pull, ingest.DemoConfig{StepDelay: a.cfg.DemoStepDelay, Outage: a.outage(),
		Limits: ingest.DemoLimits{MaxSteps: a.cfg.DemoMaxSteps, MaxEventsPerSecond: a.cfg.DemoMaxEventsPerSecond}}, a.log)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	backend := func(v string) (ingest.Agent, error) {
		b, err := config.ParseBackend(v)
		if err != nil {
			return nil, err
		}
		switch b.Kind {
		case config.BackendWorker:
			return a.pull.Queue(b.Queue), nil
		case config.BackendUpstream:
			return a.bridgeTo(b.URL)
		}
		a.demoRouted = true
		return a.demo, nil
	}
	def, err := backend(a.cfg.Agent.Backend)
	if err != nil {
		return nil, fmt.Errorf("app: agent.backend: %w", err)
	}
	var skills []string
	bySkill := map[string]ingest.Agent{}
	for _, s := range a.cfg.Agent.Skills {
		skills = append(skills, s.ID)
		if s.Backend == "" {
			continue
		}
		if bySkill[s.ID], err = backend(s.Backend); err != nil {
			return nil, fmt.Errorf("app: skill %q: backend: %w", s.ID, err)
		}
	}
	if ext := a.cfg.Agent.ExtendedCard; ext != nil {
		for _, s := range ext.AllSkills() {
			skills = append(skills, s.ID)
		}
	}
	return ingest.NewRouter(def, skills, bySkill), nil
}

// outage is how the in-process agents ride out Redis outages.
func (a *App) outage() ingest.Outage { return ingest.Outage{For: a.cfg.AgentOutageLimit} }

// bridgeTo returns the backend of the upstream agent at url: a work queue
// of its own, named after the URL so that every instance serves the same
// one, worked on by an in-process bridge (started with the background
// loops). One bridge per URL, however many skills route to it.
func (a *App) bridgeTo(url string) (ingest.Agent, error) {
	sum := sha256.Sum256([]byte(url))
	q := "upstream-" + hex.EncodeToString(sum[:6])
	if ag, ok := a.upstream[q]; ok {
		return ag, nil
	}
	links := upstream.NewRedisLinks(a.rdb, a.layout, a.cfg.TaskRetention+24*time.Hour)
	br, err := upstream.New(upstream.Deps{Pull: a.pull, Links: links, Log: a.log.With("upstream", url)},
		upstream.Config{URL: url, Queue: q, Worker: "relay-" + q, Outage: a.outage()})
	if err != nil {
		return nil, err
	}
	a.bridges = append(a.bridges, br)
	ag := bridgedAgent{PullQueue: a.pull.Queue(q), bridge: br}
	if a.upstream == nil {
		a.upstream = map[string]ingest.Agent{}
	}
	a.upstream[q] = ag
	return ag, nil
}

// bridgedAgent queues tasks for a bridge and forwards cancels to it at once
// (the bridge running the task cancels it upstream). It embeds the
// PullQueue, so that it is ingest.Queued: the commits of its tasks record
// their offers.
type bridgedAgent struct {
	ingest.PullQueue
	bridge *upstream.Bridge
}

func (b bridgedAgent) Cancel(taskID string) { b.bridge.Cancel(taskID) }
