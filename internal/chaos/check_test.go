package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// The checks must catch what they look for: these feed them made-up
// histories of one task (created, working, completed) with one push config.

func oneTask() (*Truth, []Notification) {
	t := &TaskTruth{ID: "t1", Partition: 3, State: a2a.StateCompleted, Configs: []string{"c1"}, Events: []EventTruth{
		{ID: "100-0", Kind: a2a.EventTask, State: a2a.StateSubmitted},
		{ID: "200-0", Kind: a2a.EventStatus, State: a2a.StateWorking, Seq: 1},
		{ID: "300-0", Kind: a2a.EventStatus, State: a2a.StateCompleted, Seq: 2},
	}}
	return &Truth{Tasks: map[string]*TaskTruth{"t1": t}}, t.Notifications()
}

func receipt(n Notification, code int, at int) Receipt {
	kind, state := "status", v10State(n.Event.State)
	if n.Event.Kind == a2a.EventTask {
		kind = "task"
	}
	return Receipt{NID: n.ID, Task: n.Task, Kind: kind, State: state, Seq: n.Event.Seq, Code: code,
		At: time.UnixMilli(1000).Add(time.Duration(at) * time.Millisecond)}
}

func wantViolation(t *testing.T, r *Report, substr string) {
	t.Helper()
	for _, v := range r.Violations {
		if strings.Contains(v, substr) {
			return
		}
	}
	t.Fatalf("no violation containing %q in %q", substr, r.Violations)
}

func TestNotificationID(t *testing.T) {
	// The id commit.lua computes: part .. '.' .. sha1(task|eventId|config)[1..32]
	// (printf 't1|100-0|c1' | sha1sum); TestChaos checks the ids against the
	// delivery log too.
	if got := NotificationID(3, "t1", "100-0", "c1"); got != "3.a9aa8271deaa5894ef4b5aeb0501a589" {
		t.Fatalf("NotificationID = %s", got)
	}
}

func TestCheckSink(t *testing.T) {
	tr, ns := oneTask()
	t.Run("in order with retries and a duplicate", func(t *testing.T) {
		r := &Report{}
		CheckSink(r, tr, []Receipt{receipt(ns[0], 500, 0), receipt(ns[0], 204, 10), receipt(ns[0], 204, 20),
			receipt(ns[1], 204, 30), receipt(ns[2], 503, 40), receipt(ns[2], 204, 50)})
		if len(r.Violations) > 0 || r.Delivered != 3 || r.Duplicates != 1 || r.Refused != 2 {
			t.Fatalf("report %+v", r)
		}
	})
	t.Run("lost", func(t *testing.T) {
		r := &Report{}
		CheckSink(r, tr, []Receipt{receipt(ns[0], 204, 0), receipt(ns[1], 204, 10)})
		wantViolation(t, r, "never reached the sink")
	})
	t.Run("sent before the one before was accepted", func(t *testing.T) {
		r := &Report{}
		CheckSink(r, tr, []Receipt{receipt(ns[0], 500, 0), receipt(ns[1], 204, 10), receipt(ns[0], 204, 20), receipt(ns[1], 204, 30), receipt(ns[2], 204, 40)})
		wantViolation(t, r, "was sent before position 0 was accepted")
	})
	t.Run("old one sent again", func(t *testing.T) {
		r := &Report{}
		CheckSink(r, tr, []Receipt{receipt(ns[0], 204, 0), receipt(ns[1], 204, 10), receipt(ns[2], 204, 20), receipt(ns[0], 204, 30)})
		wantViolation(t, r, "sent again after position 2 was accepted")
	})
	t.Run("same event under another id", func(t *testing.T) {
		r := &Report{}
		other := receipt(ns[1], 204, 15)
		other.NID = "3.ffff"
		CheckSink(r, tr, []Receipt{receipt(ns[0], 204, 0), receipt(ns[1], 204, 10), other, receipt(ns[2], 204, 20)})
		wantViolation(t, r, "is not one of a committed event")
	})
	t.Run("body does not match the event", func(t *testing.T) {
		r := &Report{}
		bad := receipt(ns[1], 204, 10)
		bad.Seq = 2
		CheckSink(r, tr, []Receipt{receipt(ns[0], 204, 0), bad, receipt(ns[2], 204, 20)})
		wantViolation(t, r, "carries task t1 status TASK_STATE_WORKING seq 2")
	})
}

func TestCheckRetryAfter(t *testing.T) {
	_, ns := oneTask()
	r := &Report{}
	CheckRetryAfter(r, []Receipt{receipt(ns[0], 503, 0), receipt(ns[0], 503, 1000), receipt(ns[0], 204, 1500)}, time.Second)
	if len(r.Violations) != 1 {
		t.Fatalf("violations %q", r.Violations)
	}
	wantViolation(t, r, "came again 500ms after a 503")
}

func TestCheckFollowers(t *testing.T) {
	tr, _ := oneTask()
	frames := []Frame{{ID: "100-0", Kind: "task", State: "TASK_STATE_SUBMITTED"},
		{ID: "200-0", Kind: "status", State: "TASK_STATE_WORKING", Seq: 1},
		{ID: "300-0", Kind: "status", State: "TASK_STATE_COMPLETED", Seq: 2}}
	r := &Report{}
	CheckFollowers(r, tr, []Followed{{TaskID: "t1", Mode: "stream", Frames: frames, Final: true}})
	if len(r.Violations) > 0 {
		t.Fatalf("violations %q", r.Violations)
	}
	r = &Report{}
	CheckFollowers(r, tr, []Followed{{TaskID: "t1", Mode: "stream", Frames: []Frame{frames[0], frames[2]}, Final: true}})
	wantViolation(t, r, "event 1 is 300-0")
	r = &Report{}
	CheckFollowers(r, tr, []Followed{{TaskID: "t1", Mode: "subscribe", Frames: []Frame{frames[0], frames[1], frames[1], frames[2]}, Final: true}})
	wantViolation(t, r, "event 2 is 200-0")
	r = &Report{}
	CheckFollowers(r, tr, []Followed{{TaskID: "t1", Mode: "subscribe", Frames: frames[:2]}})
	wantViolation(t, r, "missed event 300-0")
	// Subscribed late: the stream starts with the task as it stood.
	r = &Report{}
	CheckFollowers(r, tr, []Followed{{TaskID: "t1", Mode: "subscribe", Final: true,
		Frames: []Frame{{ID: "200-0", Kind: "task", State: "TASK_STATE_WORKING"}, frames[2]}}})
	if len(r.Violations) > 0 {
		t.Fatalf("violations %q", r.Violations)
	}
}

// A worker task: created, two worker events, the second of them committed
// twice (a replayed post applied again) when dup.
func workerTask(dup bool) *Truth {
	t := &TaskTruth{ID: "w1", Owner: "key:alice", State: a2a.StateCompleted, Configs: []string{"c1"}, Events: []EventTruth{
		{ID: "100-0", Kind: a2a.EventTask, State: a2a.StateSubmitted},
		{ID: "200-0", Kind: a2a.EventStatus, State: a2a.StateWorking, Mark: markPrefix + "w1/1/1"},
		{ID: "300-0", Kind: a2a.EventStatus, State: a2a.StateCompleted, Mark: markPrefix + "w1/1/2"},
	}}
	if dup {
		t.Events = append(t.Events, t.Events[2])
		t.Events[3].ID = "400-0"
	}
	return &Truth{Tasks: map[string]*TaskTruth{"w1": t}}
}

func TestCheckWorkers(t *testing.T) {
	sent := []Sent{{I: 5, TaskID: "w1", Worker: true}}
	claims := []Claim{{TaskID: "w1", Owner: "key:alice", Attempt: 1}}
	acked := map[string]string{markPrefix + "w1/1/1": "w1", markPrefix + "w1/1/2": "w1"}
	t.Run("each event once", func(t *testing.T) {
		r := &Report{}
		CheckWorkers(r, workerTask(false), sent, nil, claims, acked)
		if len(r.Violations) > 0 || r.Marks != 2 || r.WorkerTasks != 1 {
			t.Fatalf("report %+v", r)
		}
	})
	t.Run("a post applied twice", func(t *testing.T) {
		r := &Report{}
		CheckWorkers(r, workerTask(true), sent, nil, claims, acked)
		wantViolation(t, r, "is committed 2 times")
	})
	t.Run("an acknowledged post lost", func(t *testing.T) {
		r := &Report{}
		CheckWorkers(r, workerTask(false), sent, nil, claims, map[string]string{markPrefix + "w1/1/9": "w1"})
		wantViolation(t, r, "was acknowledged but Redis does not hold it")
	})
	t.Run("never claimed", func(t *testing.T) {
		r := &Report{}
		CheckWorkers(r, workerTask(false), sent, nil, nil, acked)
		wantViolation(t, r, "no worker claimed it")
	})
}

func TestCheckContextsClaims(t *testing.T) {
	sharers := []*Sharer{{Name: "alice"}, {Name: "bob"}}
	shared := []SharedTask{{Client: "alice", ContextID: "c", TaskID: "a1"}, {Client: "bob", ContextID: "c", TaskID: "b1"}}
	// A claim of bob's task that names alice: two tenants mixed. (No
	// ListTasks: the context's check runs against no relay, and its error
	// is a violation of its own, which this test does not look for.)
	claims := []Claim{{TaskID: "a1", Owner: "key:alice", ContextID: "c"}, {TaskID: "b1", Owner: "key:alice", ContextID: "c"}}
	r := &Report{}
	CheckContexts(t.Context(), r, &Truth{Tasks: map[string]*TaskTruth{}}, sharers, shared, claims, []string{"http://127.0.0.1:1/"})
	wantViolation(t, r, `the claim of task b1 (bob's, context c) carries owner "key:alice"`)
	wantViolation(t, r, "2 clients' tasks were claimed under 1 distinct owners")
}
