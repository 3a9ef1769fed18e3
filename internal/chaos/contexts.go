package chaos

import (
	"context"
	"fmt"
	"time"
)

// Sharer is a client (an API key of its own) that names contexts another
// Sharer names too: each round, every sharer of a pair creates a worker
// task in context "chaos-shared-<round>". Contexts belong to their owner,
// so each must see only its own tasks there, and the claims of the two
// clients' tasks must carry their two owners.
type Sharer struct {
	// Name is the API key's name (the principal is "key:<Name>"); Key the key.
	Name, Key string
	Targets   []string
	Hook      string

	tasks []SharedTask
}

// SharedTask is a task a Sharer got an id for.
type SharedTask struct {
	Client, ContextID, TaskID string
}

// Owner is the sharer's principal as relay names it.
func (s *Sharer) Owner() string { return "key:" + s.Name }

// RunSharers runs rounds of sharers until stop is closed (or ctx ends),
// one round every gap. Each round's sharers send in turn, the first one
// changing with the round. It returns every task created.
func RunSharers(ctx context.Context, sharers []*Sharer, gap time.Duration, stop <-chan struct{}) []SharedTask {
	var out []SharedTask
	for round := 0; ctx.Err() == nil; round++ {
		select {
		case <-stop:
			return out
		default:
		}
		ctxID := fmt.Sprintf("chaos-shared-%d", round)
		for i := range sharers {
			s := sharers[(round+i)%len(sharers)]
			if id, ok := s.send(ctx, round, ctxID); ok {
				t := SharedTask{Client: s.Name, ContextID: ctxID, TaskID: id}
				s.tasks = append(s.tasks, t)
				out = append(out, t)
			}
		}
		sleepCtx(ctx, gap)
	}
	return out
}

// send creates a worker task in ctxID, trying the instances in turn for
// up to a minute (a failed try may have created a task all the same).
func (s *Sharer) send(ctx context.Context, round int, ctxID string) (string, bool) {
	c := newClient(s.Key, 2)
	began := time.Now()
	for try := 0; ctx.Err() == nil && time.Since(began) < time.Minute; try++ {
		id, err := c.sendMessage(ctx, s.Targets[(round+try)%len(s.Targets)], fmt.Sprintf("chaos-%s-%d-%d", s.Name, round, try),
			taskSpec{text: fmt.Sprintf("chaos shared %s %d", s.Name, round), hook: s.Hook, skill: WorkSkill, contextID: ctxID})
		if err == nil {
			return id, true
		}
		sleepCtx(ctx, backoff(try+1))
	}
	return "", false
}

// ListContext lists the ids of the tasks the sharer sees in context ctxID
// (ListTasks with the contextId filter, every page), asking target.
func (s *Sharer) ListContext(ctx context.Context, target, ctxID string) ([]string, error) {
	c := newClient(s.Key, 1)
	var ids []string
	token := ""
	for range 100 {
		params := map[string]any{"contextId": ctxID, "pageSize": 100}
		if token != "" {
			params["pageToken"] = token
		}
		var page struct {
			Tasks         []struct{ ID string } `json:"tasks"`
			NextPageToken string                `json:"nextPageToken"`
		}
		if err := c.call(ctx, target, "ListTasks", params, &page); err != nil {
			return nil, err
		}
		for _, t := range page.Tasks {
			ids = append(ids, t.ID)
		}
		if token = page.NextPageToken; token == "" {
			return ids, nil
		}
	}
	return ids, fmt.Errorf("ListTasks of context %s: more than 100 pages", ctxID)
}
