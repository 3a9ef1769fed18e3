package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// Router is the Agent that sends each task to its backend: the backend of
// the skill the task's first message names in its metadata ("skill": "<id>"),
// or the default one. A task keeps its backend for all its turns, because
// its first message decides.
type Router struct {
	def     Agent
	bySkill map[string]Agent
	skills  map[string]bool
	all     []Agent
}

// NewRouter returns a Router with a default backend. skills lists every
// skill on the card (a message naming another is refused); bySkill maps
// the skills that have a backend of their own.
func NewRouter(def Agent, skills []string, bySkill map[string]Agent) *Router {
	r := &Router{def: def, bySkill: bySkill, skills: map[string]bool{}, all: []Agent{def}}
	for _, s := range skills {
		r.skills[s] = true
	}
	for _, a := range bySkill {
		r.all = append(r.all, a)
	}
	return r
}

// skillOf returns the "skill" of a message's metadata, or "". Metadata
// that cannot name it (most: see mayNameSkill) is not decoded.
func skillOf(m a2a.Message) string {
	var md struct {
		Skill string `json:"skill"`
	}
	if mayNameSkill(m.Metadata) {
		_ = json.Unmarshal(m.Metadata, &md)
	}
	return md.Skill
}

// mayNameSkill reports whether json.Unmarshal could find a "skill" key in
// md: md holds an escape, a non-ASCII byte (keys match under Unicode case
// folding) or "skill" in any ASCII case.
func mayNameSkill(md []byte) bool {
	for i, c := range md {
		if c == '\\' || c >= 0x80 {
			return true
		}
		if (c == 's' || c == 'S') && len(md)-i >= 5 && strings.EqualFold(string(md[i:i+5]), "skill") {
			return true
		}
	}
	return false
}

func (r *Router) route(t a2a.Task, msg a2a.Message) Agent {
	first := msg
	if len(t.History) > 0 {
		first = t.History[0]
	}
	if a, ok := r.bySkill[skillOf(first)]; ok {
		return a
	}
	return r.def
}

// Validate refuses a message naming a skill the card does not list, then
// lets the backend check it.
func (r *Router) Validate(msg a2a.Message) error {
	s := skillOf(msg)
	if s != "" && !r.skills[s] {
		return a2a.InvalidParams("message.metadata.skill: %q is not a skill of this agent", s)
	}
	if a, ok := r.bySkill[s]; ok {
		return a.Validate(msg)
	}
	return r.def.Validate(msg)
}

// QueueOf names the work queue of the backend the task goes to, when that
// backend is Queued, or "".
func (r *Router) QueueOf(t a2a.Task, msg a2a.Message) string {
	if q, ok := r.route(t, msg).(Queued); ok {
		return q.QueueOf(t, msg)
	}
	return ""
}

// Offer puts the turn in the work queue of the backend the task goes to
// (Service calls it only when QueueOf named one: that backend is Queued).
func (r *Router) Offer(ctx context.Context, t a2a.Task, msg a2a.Message, o taskstore.Offer) error {
	q, ok := r.route(t, msg).(Queued)
	if !ok {
		return fmt.Errorf("ingest: the backend of task %s has no work queue", t.ID)
	}
	return q.Offer(ctx, t, msg, o)
}

// Estimate is the estimate of the backend the task goes to, when that
// backend is an Estimator, or none.
func (r *Router) Estimate(t a2a.Task, msg a2a.Message) Output {
	if e, ok := r.route(t, msg).(Estimator); ok {
		return e.Estimate(t, msg)
	}
	return Output{}
}

// Start hands the task to its backend.
func (r *Router) Start(t a2a.Task, msg a2a.Message) error { return r.route(t, msg).Start(t, msg) }

// Cancel tells every backend (a backend ignores tasks it does not run).
func (r *Router) Cancel(taskID string) {
	seen := map[Agent]bool{}
	for _, a := range r.all {
		if !seen[a] {
			seen[a] = true
			a.Cancel(taskID)
		}
	}
}
