package app

import (
	"fmt"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/queue"
)

// maxClaims bounds the worker claims long-polling at once on one instance
// (each holds a connection of the blocking pool).
const maxClaims = 128

// agents builds the agent backends the configuration routes to and the
// Router in front of them.
func (a *App) agents(commit *ingest.Committer) (*ingest.Router, error) {
	claims := queue.NewClaims(a.rdb, a.streamRDB, a.cfg.RedisPrefix)
	a.pull = ingest.NewPull(claims, commit, commit.Load, a.cfg.WorkerLease, a.log)
	a.demo = ingest.NewDemo(commit, a.cfg.DemoStepDelay, a.log)
	backend := func(v string) (ingest.Agent, error) {
		b, err := config.ParseBackend(v)
		if err != nil {
			return nil, err
		}
		switch b.Kind {
		case config.BackendWorker:
			return a.pull.Queue(b.Queue), nil
		case config.BackendUpstream:
			return nil, fmt.Errorf("upstream agents are not wired yet")
		}
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
		for _, s := range ext.Skills {
			skills = append(skills, s.ID)
		}
	}
	return ingest.NewRouter(def, skills, bySkill), nil
}
