package upstream

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/redistest"
)

// A v1.0 streaming agent: its working updates, artifact chunks and final
// state arrive on our task in order, and the message went upstream
// without our ids.
func TestStreamingV10(t *testing.T) {
	t.Parallel()
	f := startAgent(t, agentOptions{streaming: true})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: f.url})

	v := s.send(t, "hello")
	up := waitUpstream(t, f)
	f.emit(up, state(a2a.StateSubmitted, ""), working("step 1"), working("step 2"), working("step 3"),
		chunk("a1", "Hel", false, false), chunk("a1", "lo", true, true), state(a2a.StateCompleted, "done"))
	final := s.waitState(t, v.Task.ID, a2a.StateCompleted)

	want := []string{"task", "working:step 1", "working:step 2", "working:step 3",
		"artifact:a1:Hel", "artifact+:a1:lo", "completed:done"}
	evs := s.events(t, v.Task.ID)
	if got := summary(evs); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	if last := evs[5]; !last.LastChunk || evs[4].LastChunk {
		t.Errorf("lastChunk flags: %v, %v; want false, true", evs[4].LastChunk, last.LastChunk)
	}
	if len(final.Artifacts) != 1 || texts(final.Artifacts[0].Parts) != "Hel|lo" {
		t.Errorf("final artifacts = %+v", final.Artifacts)
	}
	if m := final.Status.Message; m == nil || m.TaskID != v.Task.ID || m.ContextID != v.Task.ContextID {
		t.Errorf("the final status message does not carry our ids: %+v", m)
	}

	sent, n := f.lastSend()
	ours := v.Task.History[0]
	if n != 1 || sent.TaskID != "" || sent.ContextID != "" || sent.Message.MessageID != ours.MessageID ||
		texts(sent.Message.Parts) != "hello" || sent.Dialect != a2a.V10 {
		t.Errorf("the agent got %d sends, the last %+v", n, sent)
	}
	if c := f.callLog(); len(c) == 0 || c[0] != (call{"SendStreamingMessage", "1.0"}) {
		t.Errorf("calls = %+v, want SendStreamingMessage with A2A-Version 1.0 first", c)
	}
	link, ok, err := s.links.Get(context.Background(), v.Task.ID)
	if err != nil || !ok || link.UpstreamTaskID != up || link.LastMessageID != ours.MessageID || link.ContextID == "" {
		t.Errorf("link = %+v, %v, %v", link, ok, err)
	}
}

// A v0.3 agent without streaming, whose card is only at agent.json: a
// non-blocking message/send, then tasks/get polls; repeated polls of the
// same artifact do not repeat it.
func TestPollingV03(t *testing.T) {
	t.Parallel()
	f := startAgent(t, agentOptions{v03: true})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: f.url})

	v := s.send(t, "hello")
	up := waitUpstream(t, f)
	f.emit(up, working("reading"))
	s.waitState(t, v.Task.ID, a2a.StateWorking)
	f.emit(up, chunk("a1", "result", false, true))
	s.waitParts(t, v.Task.ID, "a1", 1)
	polls := f.count("tasks/get")
	waitFor(t, "more polls", func() bool { return f.count("tasks/get") >= polls+3 })
	f.emit(up, state(a2a.StateCompleted, "done"))
	s.waitState(t, v.Task.ID, a2a.StateCompleted)

	want := []string{"task", "working:reading", "artifact:a1:result", "completed:done"}
	if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	sent, _ := f.lastSend()
	if sent.Dialect != a2a.V03 || sent.Blocking {
		t.Errorf("send: dialect %s blocking %v, want 0.3 non-blocking", sent.Dialect, sent.Blocking)
	}
	for _, c := range f.callLog() {
		if c.Version != "" || (c.Method != "message/send" && c.Method != "tasks/get") {
			t.Errorf("unexpected call %+v to a v0.3 agent without streaming", c)
		}
	}
}

// The agent's stream drops mid-task: the bridge resubscribes, the chunk
// that came meanwhile arrives through the task it resubscribes to, and no
// artifact is repeated.
func TestStreamDropResubscribes(t *testing.T) {
	t.Parallel()
	f := startAgent(t, agentOptions{streaming: true})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: f.url})

	v := s.send(t, "hello")
	up := waitUpstream(t, f)
	f.emit(up, working("step 1"), chunk("a1", "one", false, false))
	s.waitParts(t, v.Task.ID, "a1", 1)

	gate := make(chan struct{})
	f.mu.Lock()
	f.subscribeGate = gate
	f.mu.Unlock()
	f.ln.dropAll()
	select {
	case <-f.subscribing:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge did not resubscribe")
	}
	f.emit(up, chunk("a1", "two", true, false)) // while the bridge is detached
	close(gate)
	s.waitParts(t, v.Task.ID, "a1", 2)
	f.emit(up, chunk("a1", "three", true, true), state(a2a.StateCompleted, "done"))
	final := s.waitState(t, v.Task.ID, a2a.StateCompleted)

	want := []string{"task", "working:step 1", "artifact:a1:one", "artifact+:a1:two", "artifact+:a1:three", "completed:done"}
	if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	if texts(final.Artifacts[0].Parts) != "one|two|three" {
		t.Errorf("artifact = %q", texts(final.Artifacts[0].Parts))
	}
	if n := f.count("SendStreamingMessage"); n != 1 {
		t.Errorf("the message was sent %d times", n)
	}
}

// Resubscribing fails (the agent does not support it): the bridge polls
// GetTask and completes the task, without repeating the artifact.
func TestResubscribeFailsPolls(t *testing.T) {
	t.Parallel()
	f := startAgent(t, agentOptions{streaming: true})
	f.mu.Lock()
	f.subscribeErr = a2a.Errorf(a2a.KindUnsupportedOperation, "resubscribe is not supported here")
	f.mu.Unlock()
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: f.url})

	v := s.send(t, "hello")
	up := waitUpstream(t, f)
	f.emit(up, working("step 1"), chunk("a1", "one", false, false))
	s.waitParts(t, v.Task.ID, "a1", 1)
	f.ln.dropAll()
	f.emit(up, chunk("a1", "two", true, true), state(a2a.StateCompleted, "done"))
	final := s.waitState(t, v.Task.ID, a2a.StateCompleted)

	want := []string{"task", "working:step 1", "artifact:a1:one", "artifact+:a1:two", "completed:done"}
	if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	if texts(final.Artifacts[0].Parts) != "one|two" {
		t.Errorf("artifact = %q", texts(final.Artifacts[0].Parts))
	}
	if f.count("SubscribeToTask") == 0 || f.count("GetTask") == 0 {
		t.Errorf("calls = %+v, want a SubscribeToTask then GetTask polls", f.callLog())
	}
}

// A client's cancel reaches the agent: at once when the app tells the
// bridge (the lease is long, so no heartbeat comes in time), by heartbeat
// when it tells another instance, and through the link when the task
// waits for the client's input (no turn runs anywhere).
func TestCancelReachesUpstream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		lease   time.Duration
		wired   bool
		waiting bool
	}{{"app calls Cancel", time.Minute, true, false}, {"heartbeat", 600 * time.Millisecond, false, false},
		{"waiting for input", time.Minute, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := startAgent(t, agentOptions{streaming: true})
			rdb, prefix := redistest.New(t)
			s := newStack(rdb, prefix, tc.lease)
			b, _ := s.startBridge(t, Config{URL: f.url})
			if tc.wired {
				s.agent.onCancel = b.Cancel
			}
			v := s.send(t, "hello")
			up := waitUpstream(t, f)
			f.emit(up, working("step 1"))
			s.waitState(t, v.Task.ID, a2a.StateWorking)
			if tc.waiting {
				f.emit(up, state(a2a.StateInputRequired, "which one?"))
				s.waitState(t, v.Task.ID, a2a.StateInputRequired)
			}
			if _, err := s.svc.CancelTask(context.Background(), v.Task.ID); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "CancelTask upstream", func() bool { return len(f.canceled()) > 0 })
			if got := f.canceled(); !slices.Equal(got, []string{up}) {
				t.Errorf("canceled upstream: %q, want [%s]", got, up)
			}
			if st := s.task(t, v.Task.ID).Status.State; st != a2a.StateCanceled {
				t.Errorf("our task is %s", st)
			}
		})
	}
}

// A bridge stopped mid-task releases the turn; a second relay instance's
// bridge takes it over at once (the lease is long), re-attaches to the
// agent's task without sending the message again, and finishes it.
func TestReattachOnAnotherInstance(t *testing.T) {
	t.Parallel()
	f := startAgent(t, agentOptions{streaming: true})
	rdb, prefix := redistest.New(t)
	s1 := newStack(rdb, prefix, time.Minute)
	s2 := newStack(rdb, prefix, time.Minute)
	_, stop1 := s1.startBridge(t, Config{URL: f.url})

	v := s1.send(t, "hello")
	up := waitUpstream(t, f)
	f.emit(up, working("step 1"), chunk("a1", "one", false, false))
	s2.waitParts(t, v.Task.ID, "a1", 1)
	stop1()

	s2.startBridge(t, Config{URL: f.url})
	waitFor(t, "the second bridge to resubscribe", func() bool { return f.count("SubscribeToTask") > 0 })
	f.emit(up, chunk("a1", "two", true, true), state(a2a.StateCompleted, "done"))
	final := s2.waitState(t, v.Task.ID, a2a.StateCompleted)

	want := []string{"task", "working:step 1", "artifact:a1:one", "artifact+:a1:two", "completed:done"}
	if got := summary(s2.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	if texts(final.Artifacts[0].Parts) != "one|two" {
		t.Errorf("artifact = %q", texts(final.Artifacts[0].Parts))
	}
	if n := f.count("SendStreamingMessage"); n != 1 || len(f.taskIDs()) != 1 {
		t.Errorf("%d sends, %d upstream tasks; want 1 and 1", n, len(f.taskIDs()))
	}
}

// An agent nobody answers for: after RetryFor the task fails, saying why.
func TestUnreachableUpstreamFails(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: url, RetryFor: 300 * time.Millisecond})

	v := s.send(t, "hello")
	final := s.waitState(t, v.Task.ID, a2a.StateFailed)
	msg := ""
	if final.Status.Message != nil {
		msg = texts(final.Status.Message.Parts)
	}
	if !strings.HasPrefix(msg, "upstream agent at "+url+": fetching its agent card: ") || !strings.Contains(msg, "connection refused") {
		t.Errorf("failed with message %q", msg)
	}
}

// The client answers an input-required task: the follow-up goes upstream
// in the agent's task and context, and the task completes. When the agent
// answers the follow-up with its task still waiting (it takes the message
// in later), that stale status does not stop our task again.
func TestFollowUpAfterInputRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lazy bool
	}{{"agent resumes at once", false}, {"first snapshot still waits", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := startAgent(t, agentOptions{streaming: true})
			f.mu.Lock()
			f.lazyFollowUp = tc.lazy
			f.mu.Unlock()
			rdb, prefix := redistest.New(t)
			s := newStack(rdb, prefix, 3*time.Second)
			s.startBridge(t, Config{URL: f.url})

			v := s.send(t, "book a table")
			up := waitUpstream(t, f)
			f.emit(up, working(""), state(a2a.StateInputRequired, "for how many?"))
			s.waitState(t, v.Task.ID, a2a.StateInputRequired)

			answer := textMessage("four")
			if _, err := s.svc.Send(context.Background(), a2a.SendParams{Dialect: a2a.V10, TaskID: v.Task.ID, Message: answer}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the follow-up upstream", func() bool { _, n := f.lastSend(); return n == 2 })
			sent, _ := f.lastSend()
			if sent.TaskID != up || sent.ContextID != "upctx-"+up || sent.Message.MessageID != answer.MessageID || texts(sent.Message.Parts) != "four" {
				t.Errorf("follow-up = %+v, want the message in task %s", sent, up)
			}
			if tc.lazy {
				// Let the bridge see the stale status a few times.
				n := f.count("SubscribeToTask") + f.count("GetTask")
				waitFor(t, "the bridge to look again", func() bool { return f.count("SubscribeToTask")+f.count("GetTask") >= n+2 })
				if st := s.task(t, v.Task.ID).Status.State; st != a2a.StateWorking {
					t.Fatalf("our task is %s after the agent showed its stale status, want working", st)
				}
				f.emit(up, working("")) // the agent takes the answer in
			}
			f.emit(up, state(a2a.StateCompleted, "booked"))
			final := s.waitState(t, v.Task.ID, a2a.StateCompleted)

			want := []string{"task", "working", "input-required:for how many?", "message", "working", "completed:booked"}
			if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
				t.Fatalf("events:\n got %q\nwant %q", got, want)
			}
			if len(final.History) != 2 || len(f.taskIDs()) != 1 {
				t.Errorf("history %d messages, %d upstream tasks; want 2 and 1", len(final.History), len(f.taskIDs()))
			}
			link, _, _ := s.links.Get(context.Background(), v.Task.ID)
			if link.LastMessageID != answer.MessageID || link.Waiting == "" {
				t.Errorf("link = %+v, want the follow-up as the last message and the waiting status", link)
			}
		})
	}
}
