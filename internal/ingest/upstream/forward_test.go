package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/workqueue"
)

// fakePull records what a turn posts; its state follows the posted statuses.
type fakePull struct {
	posted [][]a2a.Event
	state  a2a.TaskState
}

func (p *fakePull) Lease() time.Duration { return time.Minute }
func (p *fakePull) Claim(context.Context, string, string, time.Duration) (*ingest.Claimed, error) {
	return nil, nil
}
func (p *fakePull) Heartbeat(context.Context, string, string) (ingest.Beat, error) {
	return ingest.Beat{}, nil
}
func (p *fakePull) Release(context.Context, string, string) error { return nil }
func (p *fakePull) PostOnce(_ context.Context, _, _, _ string, evs []a2a.Event) (ingest.Posted, error) {
	p.posted = append(p.posted, evs)
	for _, ev := range evs {
		if ev.Kind == a2a.EventStatus {
			p.state = ev.Status.State
		}
	}
	return ingest.Posted{State: p.state, Released: p.state.Terminal() || p.state.Interrupted()}, nil
}

// memLinks keeps links in memory.
type memLinks struct {
	mu sync.Mutex
	m  map[string]Link
}

func (l *memLinks) Get(_ context.Context, id string) (Link, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.m[id]
	return v, ok, nil
}

func (l *memLinks) Put(_ context.Context, id string, v Link) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[id] = v
	return nil
}

// testTurn is a turn on our task ours, as claimed.
func testTurn(t *testing.T, ours a2a.Task) (*turn, *fakePull) {
	p := &fakePull{state: ours.Status.State}
	b := mustBridge(Deps{Pull: p, Links: &memLinks{m: map[string]Link{}}, Log: testLog()}, Config{URL: "http://127.0.0.1:1"})
	ctx, stop := context.WithCancelCause(context.Background())
	t.Cleanup(func() { stop(nil) })
	c := &ingest.Claimed{Work: workqueue.Work{TaskID: ours.ID, LeaseID: "l"}, View: a2a.TaskView{Task: ours}, Message: textMessage("hi")}
	return newTurn(b, ctx, stop, c), p
}

func textArtifact(id string, parts ...string) a2a.Artifact {
	a := a2a.Artifact{ArtifactID: id}
	for _, p := range parts {
		a.Parts = append(a.Parts, a2a.Part{Kind: a2a.PartText, Text: p})
	}
	return a
}

// A snapshot of the agent's task forwards only what our task lacks.
func TestSnapshotForwardsWhatIsMissing(t *testing.T) {
	t.Parallel()
	upTask := func(st a2a.TaskState, arts ...a2a.Artifact) a2a.Task {
		return a2a.Task{ID: "up", ContextID: "uc", Status: a2a.TaskStatus{State: st}, Artifacts: arts}
	}
	for _, tc := range []struct {
		name string
		ours a2a.TaskState
		up   a2a.Task
		want []string
	}{
		{"same", a2a.StateWorking, upTask(a2a.StateWorking, textArtifact("a1", "one")), nil},
		{"more parts", a2a.StateWorking, upTask(a2a.StateWorking, textArtifact("a1", "one", "two")), []string{"artifact+:a1:two"}},
		{"changed parts", a2a.StateWorking, upTask(a2a.StateWorking, textArtifact("a1", "uno")), []string{"artifact:a1:uno"}},
		{"fewer parts", a2a.StateWorking, upTask(a2a.StateWorking, textArtifact("a1")), []string{"artifact:a1:"}},
		{"new artifact", a2a.StateWorking, upTask(a2a.StateWorking, textArtifact("a1", "one"), textArtifact("a2", "x")), []string{"artifact:a2:x"}},
		{"state", a2a.StateWorking, upTask(a2a.StateCompleted, textArtifact("a1", "one")), []string{"completed"}},
		{"submitted is not posted", a2a.StateSubmitted, upTask(a2a.StateSubmitted), nil},
		{"from submitted to completed", a2a.StateSubmitted, upTask(a2a.StateCompleted, textArtifact("a1", "one", "two")),
			[]string{"artifact+:a1:two", "working", "completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ours := a2a.Task{ID: "ours", ContextID: "oc", Status: a2a.TaskStatus{State: tc.ours},
				Artifacts: []a2a.Artifact{textArtifact("a1", "one")}}
			tr, p := testTurn(t, ours)
			if err := tr.onTask(tc.up); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, evs := range p.posted {
				got = append(got, summary(evs)...)
				for _, ev := range evs {
					if ev.TaskID != "ours" {
						t.Errorf("posted an event for task %q", ev.TaskID)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("posted %q, want %q", got, tc.want)
			}
			// The same snapshot again forwards nothing more.
			n := len(p.posted)
			if err := tr.onTask(tc.up); err != nil || len(p.posted) != n {
				t.Errorf("a repeated snapshot posted %d more batches (err %v)", len(p.posted)-n, err)
			}
		})
	}
}

// A message about a known task is a status update of the current state;
// the agent's ids never reach our task.
func TestMessageOfTaskIsStatus(t *testing.T) {
	t.Parallel()
	tr, p := testTurn(t, a2a.Task{ID: "ours", ContextID: "oc", Status: a2a.TaskStatus{State: a2a.StateWorking}})
	if err := tr.onTask(a2a.Task{ID: "up", ContextID: "uc", Status: a2a.TaskStatus{State: a2a.StateWorking}}); err != nil {
		t.Fatal(err)
	}
	m := a2a.Message{MessageID: "m", TaskID: "up", ContextID: "uc", Parts: []a2a.Part{{Kind: a2a.PartText, Text: "note"}}}
	if err := tr.onEvent(a2a.Event{Kind: a2a.EventMessage, TaskID: "up", Message: &m}); err != nil {
		t.Fatal(err)
	}
	if len(p.posted) != 1 || !slices.Equal(summary(p.posted[0]), []string{"working:note"}) {
		t.Fatalf("posted %v", p.posted)
	}
	got := p.posted[0][0].Status.Message
	if got.TaskID != "ours" || got.ContextID != "oc" || got.Role != a2a.RoleAgent {
		t.Errorf("message = %+v", got)
	}
	// An event of another upstream task is ignored.
	other := chunk("a9", "x", false, false)
	other.TaskID = "elsewhere"
	if err := tr.onEvent(other); err != nil || len(p.posted) != 1 {
		t.Errorf("an event of another task was posted (err %v)", err)
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		max      int
		want     []string
		err      error
	}{
		{"one", "data: a\n\n", 64, []string{"a"}, io.EOF},
		{"multi-line CRLF", "data: a\r\ndata: b\r\n\r\n", 64, []string{"a\nb"}, io.EOF},
		{"CR", "data:a\r\rdata:  b\r\r", 64, []string{"a", " b"}, io.EOF},
		{"comments and fields", ": ping\n\nid: 1\nevent: x\nretry: 5\ndata: a\n\n: ping\n\n", 64, []string{"a"}, io.EOF},
		{"unfinished event dropped", "data: a\n\ndata: b\n", 64, []string{"a"}, io.EOF},
		{"empty data skipped", "data:\n\ndata: \n\ndata: c\n\n", 64, []string{"c"}, io.EOF},
		{"line too long", "data: " + strings.Repeat("x", 100) + "\n\n", 32, nil, errEventTooLarge},
		{"event too large", strings.Repeat("data: 0123456789\n", 4) + "\n", 32, nil, errEventTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newSSEReader(strings.NewReader(tc.in), tc.max)
			var got []string
			for {
				d, err := r.next()
				if err != nil {
					if !errors.Is(err, tc.err) {
						t.Errorf("err = %v, want %v", err, tc.err)
					}
					break
				}
				got = append(got, string(d))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzSSEReader: any input ends, never panics, never yields an event
// larger than the bound.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\ndata: b\r\n\r\n", ": ping\r\r", "data:" + strings.Repeat("z", 80)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 64
		r := newSSEReader(bytes.NewReader(in), max)
		for range len(in) + 1 {
			d, err := r.next()
			if err != nil {
				return
			}
			if len(d) > max {
				t.Fatalf("event of %d bytes", len(d))
			}
		}
		t.Fatal("more events than input bytes")
	})
}

// In a follow-up turn, the agent's status at which our task stopped is not
// news, whether in a snapshot or an event; a new interruption is.
func TestStaleWaitingStatus(t *testing.T) {
	t.Parallel()
	asked := a2a.TaskStatus{State: a2a.StateInputRequired, Timestamp: "2026-01-01T00:00:00Z",
		Message: &a2a.Message{MessageID: "q1", Role: a2a.RoleAgent, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "how many?"}}}}
	tr, p := testTurn(t, a2a.Task{ID: "ours", ContextID: "oc", Status: a2a.TaskStatus{State: a2a.StateWorking}})
	tr.link = Link{UpstreamTaskID: "up", LastMessageID: "old", Waiting: waitMark(asked)}
	tr.linked = true
	if err := tr.onTask(a2a.Task{ID: "up", Status: asked}); err != nil {
		t.Fatal(err)
	}
	if err := tr.onEvent(a2a.Event{Kind: a2a.EventStatus, TaskID: "up", Status: &asked}); err != nil {
		t.Fatal(err)
	}
	if len(p.posted) != 0 || tr.done {
		t.Fatalf("the stale status was posted: %v", p.posted)
	}
	again := asked
	again.Message = &a2a.Message{MessageID: "q2", Role: a2a.RoleAgent, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "and when?"}}}
	if err := tr.onEvent(a2a.Event{Kind: a2a.EventStatus, TaskID: "up", Status: &again}); err != nil {
		t.Fatal(err)
	}
	if len(p.posted) != 1 || !tr.done || tr.link.Waiting != waitMark(again) {
		t.Fatalf("a new question: posted %v, done %v, link %+v", p.posted, tr.done, tr.link)
	}
}
