package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// Report is the outcome of a chaos run: its figures and every broken
// guarantee found.
type Report struct {
	// Tasks a client got an id for; Committed the tasks Redis holds;
	// Orphans those no client got an id for (a send that failed after its
	// commit, then tried again); Completed and Stuck by final state. An
	// acknowledged task left stuck is a violation: its demo agent runs
	// under a lease and rides out Redis outages, so it always ends (an
	// orphan may stay stuck: its send failed before the task was offered).
	Tasks, Committed, Orphans, Completed, Stuck int
	FailedSends                                 int64
	// Expected notifications (committed events x push configs); Delivered
	// those the sink accepted; Receipts every POST it got; Refused the
	// POSTs it answered 500 or 503; Duplicates the POSTs of a notification
	// after the sink had accepted it (always under the same id).
	Expected, Delivered, Receipts, Refused, Duplicates int
	// Attempts is the sum of the attempts the delivery log records;
	// Retries = Attempts - Delivered.
	Attempts, Retries int
	// Commit (the event's stream id time) to first acceptance by the sink.
	LatencyP50, LatencyP99, LatencyMax time.Duration
	// SSE followers: tasks followed, events received, streams opened,
	// streams cut by the followers, streams that ended early otherwise.
	Followed, Frames, Connects, Cuts, Drops int
	// Worker tasks (acknowledged, of them in shared contexts), the claims
	// of them (Takeovers: claims after a lost lease), the posts the
	// workers began, those relay acknowledged, the replies cut on the
	// way, the posts the workers sent again themselves (on top of the
	// package's own retries), and the worker events Redis holds.
	WorkerTasks, SharedTasks, Claims, Takeovers  int
	Posts, AckedPosts, CutReplies, WorkerRetries int64
	Marks                                        int
	// WorkerNotCompleted counts worker tasks that ended otherwise than
	// completed (their worker failed them after an error answer); Notes
	// names some.
	WorkerNotCompleted int
	Notes              []string
	// Contexts named by two clients, and the ListTasks calls that checked them.
	SharedContexts, ContextLists int
	// Faults lists what was done to the system, with times.
	Faults []string
	// Elapsed is the time of the whole run.
	Elapsed time.Duration

	Violations []string
}

// maxViolations bounds the violations a report lists (the count is kept).
const maxViolations = 40

func (r *Report) violate(format string, args ...any) {
	if len(r.Violations) == maxViolations {
		r.Violations = append(r.Violations, "… (more violations left out)")
	}
	if len(r.Violations) < maxViolations {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tasks: %d acknowledged to clients, %d committed (%d orphans of failed sends), %d completed, %d stuck; %d sends failed and were retried\n",
		r.Tasks, r.Committed, r.Orphans, r.Completed, r.Stuck, r.FailedSends)
	fmt.Fprintf(&b, "notifications: %d expected, %d delivered; %d POSTs received, %d refused by the sink (500/503), %d duplicates (same notification id)\n",
		r.Expected, r.Delivered, r.Receipts, r.Refused, r.Duplicates)
	fmt.Fprintf(&b, "delivery log: %d attempts, %d retries\n", r.Attempts, r.Retries)
	fmt.Fprintf(&b, "commit to receipt: p50 %s, p99 %s, max %s\n", r.LatencyP50.Round(time.Millisecond), r.LatencyP99.Round(time.Millisecond), r.LatencyMax.Round(time.Millisecond))
	fmt.Fprintf(&b, "sse: %d tasks followed, %d events, %d streams opened, %d cut by the client, %d dropped otherwise\n",
		r.Followed, r.Frames, r.Connects, r.Cuts, r.Drops)
	fmt.Fprintf(&b, "workers: %d worker tasks (%d in %d contexts named by two clients, %d ListTasks checks; %d not completed), %d claims (%d takeovers); %d posts begun, %d acknowledged, %d replies cut, %d sent again by the workers, %d worker events committed\n",
		r.WorkerTasks, r.SharedTasks, r.SharedContexts, r.ContextLists, r.WorkerNotCompleted, r.Claims, r.Takeovers, r.Posts, r.AckedPosts, r.CutReplies, r.WorkerRetries, r.Marks)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, f := range r.Faults {
		fmt.Fprintf(&b, "fault: %s\n", f)
	}
	fmt.Fprintf(&b, "time: %s; violations: %d", r.Elapsed.Round(100*time.Millisecond), len(r.Violations))
	return b.String()
}

// CheckTasks checks that every task a client got an id for is committed
// and ended (final or interrupted), and counts tasks by outcome.
func CheckTasks(r *Report, tr *Truth, sent []Sent) {
	r.Tasks, r.Committed = len(sent), len(tr.Tasks)
	acked := make(map[string]bool, len(sent))
	for _, s := range sent {
		acked[s.TaskID] = true
		switch t := tr.Tasks[s.TaskID]; {
		case t == nil:
			r.violate("task %s (client request %d, created by %s) was acknowledged but Redis does not hold it", s.TaskID, s.I, s.Target)
		case !t.State.Terminal() && !t.State.Interrupted():
			r.violate("task %s (client request %d, created by %s) was acknowledged but is still %s: its agent never finished it", s.TaskID, s.I, s.Target, t.State)
		}
	}
	for id, t := range tr.Tasks {
		if !acked[id] && !strings.HasPrefix(t.Text, "chaos sse") {
			r.Orphans++
		}
		if t.State.Terminal() {
			r.Completed++
		} else {
			r.Stuck++
		}
		if len(t.Configs) != 1 {
			r.violate("task %s has %d push configs, want 1", id, len(t.Configs))
		}
	}
}

// CheckSink checks the notifications the sink received against what Redis
// committed: each committed event delivered at least once, only committed
// events delivered, duplicates only under the same notification id, and
// per (task, config) none sent before the one before it was accepted.
func CheckSink(r *Report, tr *Truth, receipts []Receipt) {
	want := map[string]Notification{}
	for _, n := range tr.Notifications() {
		want[n.ID] = n
	}
	r.Expected, r.Receipts = len(want), len(receipts)
	byLane := map[string][]Receipt{}
	firstAccepted := map[string]Receipt{}
	for _, rc := range receipts {
		if !rc.Accepted() {
			r.Refused++
		}
		if rc.Problem != "" {
			r.violate("notification %s of task %s: %s", rc.NID, rc.Task, rc.Problem)
		}
		n, ok := want[rc.NID]
		if !ok {
			r.violate("notification %s (task %s, %s %s seq %d) is not one of a committed event", rc.NID, rc.Task, rc.Kind, rc.State, rc.Seq)
			continue
		}
		if rc.Task != n.Task || rc.Seq != n.Event.Seq || !sameKind(rc, n.Event) {
			r.violate("notification %s carries task %s %s %s seq %d, but its event %s of task %s is %s %s seq %d",
				rc.NID, rc.Task, rc.Kind, rc.State, rc.Seq, n.Event.ID, n.Task, n.Event.Kind, n.Event.State, n.Event.Seq)
		}
		if _, seen := firstAccepted[rc.NID]; seen {
			r.Duplicates++
		} else if rc.Accepted() {
			firstAccepted[rc.NID] = rc
		}
		lane := n.Task + " " + n.Config
		byLane[lane] = append(byLane[lane], rc)
	}
	var latencies []time.Duration
	for id, n := range want {
		rc, ok := firstAccepted[id]
		if !ok {
			r.violate("committed event %s (%s %s seq %d) of task %s never reached the sink (notification %s)",
				n.Event.ID, n.Event.Kind, n.Event.State, n.Event.Seq, n.Task, id)
			continue
		}
		latencies = append(latencies, rc.At.Sub(streamTime(n.Event.ID)))
	}
	r.Delivered = len(firstAccepted)
	slices.Sort(latencies)
	if k := len(latencies); k > 0 {
		r.LatencyP50, r.LatencyP99, r.LatencyMax = latencies[k/2], latencies[min(k-1, k*99/100)], latencies[k-1]
	}
	for lane, rcs := range byLane {
		accepted := -1 // every position up to this one was accepted
		for _, rc := range rcs {
			p := want[rc.NID].Pos
			switch {
			case p > accepted+1:
				r.violate("lane %s: notification %s (position %d) was sent before position %d was accepted", lane, rc.NID, p, accepted+1)
			case p < accepted:
				r.violate("lane %s: notification %s (position %d) was sent again after position %d was accepted", lane, rc.NID, p, accepted)
			case p == accepted+1 && rc.Accepted():
				accepted = p
			}
		}
	}
}

// stateAfter is the task's state after events.
func stateAfter(events []EventTruth) a2a.TaskState {
	var st a2a.TaskState
	for _, e := range events {
		if e.Kind == a2a.EventTask || e.Kind == a2a.EventStatus {
			st = e.State
		}
	}
	return st
}

// CheckRetryAfter checks that relay honoured the sink's Retry-After: after
// a 503, the same notification comes again no sooner than after (less
// slack for the clocks of the two processes).
func CheckRetryAfter(r *Report, receipts []Receipt, after time.Duration) {
	last503 := map[string]Receipt{}
	for _, rc := range receipts {
		if prev, ok := last503[rc.NID]; ok {
			if gap := rc.At.Sub(prev.At); gap < after-50*time.Millisecond {
				r.violate("notification %s of task %s came again %s after a 503 with Retry-After %s", rc.NID, rc.Task, gap.Round(time.Millisecond), after)
			}
			delete(last503, rc.NID)
		}
		if rc.Code == http.StatusServiceUnavailable {
			last503[rc.NID] = rc
		}
	}
}

func sameKind(rc Receipt, e EventTruth) bool {
	switch e.Kind {
	case a2a.EventTask:
		return rc.Kind == "task"
	case a2a.EventStatus:
		return rc.Kind == "status" && rc.State == v10State(e.State)
	case a2a.EventArtifact:
		return rc.Kind == "artifact"
	}
	return false
}

// v10State is the v1.0 enum name of a state.
func v10State(s a2a.TaskState) string {
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
}

// CheckFollowers checks that each SSE follower saw every event of its task
// after the point it subscribed at, exactly once and in commit order.
func CheckFollowers(r *Report, tr *Truth, followed []Followed) {
	for _, fl := range followed {
		r.Connects += fl.Connects
		r.Cuts += fl.Cuts
		r.Drops += fl.Drops
		r.Frames += len(fl.Frames)
		if fl.TaskID == "" {
			r.violate("sse follower (%s mode): no task was ever created; errors: %s", fl.Mode, strings.Join(fl.Errors, " | "))
			continue
		}
		r.Followed++
		t := tr.Tasks[fl.TaskID]
		if t == nil {
			r.violate("sse task %s: Redis does not hold it", fl.TaskID)
			continue
		}
		if fl.NotFollowed != "" {
			if fl.Mode != "subscribe" || !strings.Contains(fl.NotFollowed, "-32004") || !t.State.Terminal() {
				r.violate("sse task %s (%s mode, state %s) could not be followed: %s", fl.TaskID, fl.Mode, t.State, fl.NotFollowed)
			}
			continue
		}
		if len(fl.Frames) == 0 || fl.Frames[0].Kind != "task" {
			r.violate("sse task %s: the stream did not start with the task: %+v", fl.TaskID, fl.Frames)
			continue
		}
		start := fl.Frames[0].ID
		at := slices.IndexFunc(t.Events, func(e EventTruth) bool { return e.ID == start })
		switch {
		case at < 0:
			r.violate("sse task %s: the stream started at event %s, which Redis does not hold", fl.TaskID, start)
			continue
		case fl.Mode == "stream" && at != 0:
			r.violate("sse task %s: SendStreamingMessage started at event %s, not at the task's creation %s", fl.TaskID, start, t.Events[0].ID)
		}
		if st := stateAfter(t.Events[:at+1]); fl.Frames[0].State != v10State(st) {
			r.violate("sse task %s: the stream started with the task %s at event %s, where it was %s", fl.TaskID, fl.Frames[0].State, start, st)
		}
		var want []EventTruth
		for _, e := range t.Events[at+1:] {
			if e.Kind == a2a.EventStatus || e.Kind == a2a.EventArtifact {
				want = append(want, e)
			}
		}
		got := fl.Frames[1:]
		for i := range max(len(want), len(got)) {
			switch {
			case i >= len(got):
				r.violate("sse task %s: missed event %s (%s seq %d) and %d after it; last received %s (%d streams, errors: %s)",
					fl.TaskID, want[i].ID, want[i].State, want[i].Seq, len(want)-i-1, fl.Last(), fl.Connects, strings.Join(fl.Errors, " | "))
			case i >= len(want):
				r.violate("sse task %s: received %s (%s seq %d) beyond the last committed event", fl.TaskID, got[i].ID, got[i].State, got[i].Seq)
			case got[i].ID != want[i].ID || got[i].Seq != want[i].Seq || got[i].Kind == "task" ||
				(want[i].Kind == a2a.EventStatus && got[i].State != v10State(want[i].State)):
				r.violate("sse task %s: event %d is %s (%s %s seq %d, stream %d), want %s (%s seq %d)",
					fl.TaskID, i+1, got[i].ID, got[i].Kind, got[i].State, got[i].Seq, got[i].Conn, want[i].ID, want[i].State, want[i].Seq)
			default:
				continue
			}
			break
		}
		if t.State.Terminal() && !fl.Final {
			r.violate("sse task %s is %s, but its follower did not receive the final event", fl.TaskID, t.State)
		}
	}
}

// delivery is a record of the delivery log API.
type delivery struct {
	ID       string `json:"id"`
	TaskID   string `json:"taskId"`
	EventID  string `json:"eventId"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
}

// CheckDeliveryLog reads every task's deliveries from the relays'
// management API (GET /v1/deliveries?task=…, instances in turn) and checks
// that each notification owed is listed as delivered with its attempts.
func CheckDeliveryLog(ctx context.Context, r *Report, tr *Truth, bases []string, token string) {
	c := &http.Client{Timeout: 10 * time.Second}
	ids := make([]string, 0, len(tr.Tasks))
	for id := range tr.Tasks {
		ids = append(ids, id)
	}
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	for w := range 8 {
		wg.Go(func() {
			for {
				mu.Lock()
				if next == len(ids) {
					mu.Unlock()
					return
				}
				id, base := ids[next], bases[(next+w)%len(bases)]
				next++
				mu.Unlock()
				got, err := listDeliveries(ctx, c, base, token, id)
				mu.Lock()
				checkTaskLog(r, tr.Tasks[id], got, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.Retries = r.Attempts - r.Delivered
}

func checkTaskLog(r *Report, t *TaskTruth, got []delivery, err error) {
	if err != nil {
		r.violate("delivery log of task %s: %v", t.ID, err)
		return
	}
	byID := map[string]delivery{}
	for _, d := range got {
		byID[d.ID] = d
		r.Attempts += d.Attempts
	}
	want := t.Notifications()
	if len(got) != len(want) {
		r.violate("delivery log of task %s lists %d deliveries, want %d", t.ID, len(got), len(want))
	}
	for _, n := range want {
		d, ok := byID[n.ID]
		switch {
		case !ok:
			r.violate("delivery log of task %s does not list notification %s (event %s)", t.ID, n.ID, n.Event.ID)
		case d.Status != "delivered" || d.Attempts < 1 || d.EventID != n.Event.ID:
			r.violate("delivery log of task %s: %s is %s after %d attempts (event %s, want %s)", t.ID, d.ID, d.Status, d.Attempts, d.EventID, n.Event.ID)
		}
	}
}

func listDeliveries(ctx context.Context, c *http.Client, base, token, task string) ([]delivery, error) {
	var out []delivery
	cursor := ""
	for range 100 {
		u := base + "/v1/deliveries?limit=500&task=" + url.QueryEscape(task)
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		var page struct {
			Deliveries []delivery `json:"deliveries"`
			NextCursor string     `json:"nextCursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			return nil, fmt.Errorf("GET %s: HTTP %d (%v)", u, resp.StatusCode, err)
		}
		out = append(out, page.Deliveries...)
		if cursor = page.NextCursor; cursor == "" {
			return out, nil
		}
	}
	return out, fmt.Errorf("GET deliveries of %s: more than 100 pages", task)
}

// CheckWorkers checks the worker tasks: each acknowledged one was claimed
// and completed; every event a worker posted is committed at most once
// (each carries a marker of its own, so a post applied twice shows as its
// marker twice), and every post relay acknowledged is committed.
func CheckWorkers(r *Report, tr *Truth, sent []Sent, shared []SharedTask, claims []Claim, acked map[string]string) {
	claimed := map[string]int{}
	for _, c := range claims {
		claimed[c.TaskID]++
		if c.Attempt > 1 {
			r.Takeovers++
		}
	}
	r.Claims, r.SharedTasks = len(claims), len(shared)
	check := func(id, what string) {
		r.WorkerTasks++
		t := tr.Tasks[id]
		switch {
		case t == nil:
			return // CheckTasks says so
		case claimed[id] == 0:
			r.violate("worker task %s (%s) is %s but no worker claimed it", id, what, t.State)
		case t.State != "completed" && (t.State.Terminal() || t.State.Interrupted()):
			// Final all the same (the guarantee holds), but its worker
			// completes every task: workers.log says what relay answered.
			r.WorkerNotCompleted++
			if len(r.Notes) < 10 {
				r.Notes = append(r.Notes, fmt.Sprintf("worker task %s (%s) ended %s, not completed (see workers.log)", id, what, t.State))
			}
		}
	}
	for _, s := range sent {
		if s.Worker {
			check(s.TaskID, fmt.Sprintf("client request %d", s.I))
		}
	}
	for _, s := range shared {
		check(s.TaskID, s.Client+" in "+s.ContextID)
	}
	committed := map[string]int{}
	for _, t := range tr.Tasks {
		for _, e := range t.Events {
			if e.Mark == "" {
				continue
			}
			r.Marks++
			committed[e.Mark]++
			if !strings.HasPrefix(e.Mark, markPrefix+t.ID+"/") {
				r.violate("task %s holds event %s of another task (%s)", t.ID, e.ID, e.Mark)
			}
		}
	}
	for m, n := range committed {
		if n > 1 {
			r.violate("worker event %q is committed %d times: a post sent again was applied again", m, n)
		}
	}
	r.AckedPosts = int64(len(acked))
	for m, task := range acked {
		if committed[m] == 0 {
			r.violate("worker event %q of task %s was acknowledged but Redis does not hold it", m, task)
		}
	}
}

// CheckContexts checks the contexts two clients named: each client's
// ListTasks with the contextId filter lists all of its own tasks there
// and none of another's, and the claims of the tasks carry their client
// as owner (and the context as named), so two clients' claims in one
// context differ by owner.
func CheckContexts(ctx context.Context, r *Report, tr *Truth, sharers []*Sharer, shared []SharedTask, claims []Claim, targets []string) {
	owners := map[string]string{} // client name → principal
	for _, s := range sharers {
		owners[s.Name] = s.Owner()
	}
	byTask := map[string]SharedTask{}
	clients := map[string]map[string]bool{} // context → clients with a task there
	for _, t := range shared {
		byTask[t.TaskID] = t
		if clients[t.ContextID] == nil {
			clients[t.ContextID] = map[string]bool{}
		}
		clients[t.ContextID][t.Client] = true
	}
	claimOwners := map[string]map[string]bool{} // context → owners its claims carried
	for _, c := range claims {
		t, ok := byTask[c.TaskID]
		if !ok {
			continue
		}
		if c.Owner != owners[t.Client] || c.ContextID != t.ContextID {
			r.violate("the claim of task %s (%s's, context %s) carries owner %q and context %q, want %q and %q",
				c.TaskID, t.Client, t.ContextID, c.Owner, c.ContextID, owners[t.Client], t.ContextID)
		}
		if claimOwners[t.ContextID] == nil {
			claimOwners[t.ContextID] = map[string]bool{}
		}
		claimOwners[t.ContextID][c.Owner] = true
	}
	i := 0
	for ctxID, names := range clients {
		if len(names) < 2 {
			continue
		}
		r.SharedContexts++
		if got := len(claimOwners[ctxID]); got < len(names) {
			r.violate("context %s: %d clients' tasks were claimed under %d distinct owners %v", ctxID, len(names), got, claimOwners[ctxID])
		}
		for _, s := range sharers {
			target := targets[i%len(targets)]
			i++
			ids, err := s.ListContext(ctx, target, ctxID)
			r.ContextLists++
			if err != nil {
				r.violate("ListTasks of %s in context %s on %s: %v", s.Name, ctxID, target, err)
				continue
			}
			listed := map[string]bool{}
			for _, id := range ids {
				listed[id] = true
				switch t := tr.Tasks[id]; {
				case t == nil:
					r.violate("%s's ListTasks in context %s lists task %s, which Redis does not hold", s.Name, ctxID, id)
				case t.Owner != s.Owner():
					r.violate("%s's ListTasks in context %s lists task %s of %s", s.Name, ctxID, id, t.Owner)
				}
			}
			for _, t := range s.tasks {
				if t.ContextID == ctxID && !listed[t.TaskID] {
					r.violate("%s's ListTasks in context %s does not list its task %s", s.Name, ctxID, t.TaskID)
				}
			}
		}
	}
}
