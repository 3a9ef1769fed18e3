package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/a2a/rest"
)

// fakeAgent is the upstream A2A agent of the tests: an in-memory
// a2a.Service and a2a.Streamer served by relay's own A2A handler (so its
// wire is the one relay serves: JSON-RPC, SSE with keep-alives), whose
// tasks move only when the test calls emit.
type fakeAgent struct {
	t      *testing.T
	url    string
	ln     *trackListener
	server *fiber.App
	ep     *a2a.Endpoint
	h      *jsonrpc.Handler

	mu      sync.Mutex
	tasks   map[string]*fakeTask
	wake    chan struct{} // closed and replaced on every change
	sends   []a2a.SendParams
	calls   []call
	cancels []string
	// lazyFollowUp: a message to an existing task leaves its state as it
	// is (the agent takes it in later), so streams and sends answer with
	// the task still waiting for input.
	lazyFollowUp bool
	// subscribeErr, when set, fails every SubscribeToTask / tasks/resubscribe.
	subscribeErr error
	// subscribeGate, when set, holds each subscribe until it is closed.
	subscribeGate chan struct{}
	subscribing   chan struct{} // receives when a subscribe reaches the gate
}

type fakeTask struct {
	task    a2a.Task
	dialect a2a.Dialect
	events  []a2a.StreamEvent
}

// call is one JSON-RPC request the agent received.
type call struct{ Method, Version string }

// agentOptions choose the card the agent serves.
type agentOptions struct {
	v03       bool // a v0.3-only card, served at /.well-known/agent.json only
	streaming bool
}

func startAgent(t *testing.T, o agentOptions) *fakeAgent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAgent{t: t, url: "http://" + ln.Addr().String(), ln: &trackListener{Listener: ln},
		tasks: map[string]*fakeTask{}, wake: make(chan struct{}), subscribing: make(chan struct{}, 16)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ep, err := a2a.NewEndpoint(a2a.EndpointDeps{Service: f, Streams: f, Log: log},
		a2a.StreamConfig{KeepAlive: 30 * time.Millisecond, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if f.h, err = jsonrpc.New(jsonrpc.Deps{Endpoint: ep, Log: log}); err != nil {
		t.Fatal(err)
	}
	f.ep = ep
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(func(c *fiber.Ctx) error {
		var env struct{ Method string }
		if c.Method() == fiber.MethodPost && json.Unmarshal(c.Body(), &env) == nil {
			f.mu.Lock()
			f.calls = append(f.calls, call{env.Method, c.Get("A2A-Version")})
			f.mu.Unlock()
		}
		return c.Next()
	})
	app.Post("/rpc", f.h.Serve)
	if o.v03 {
		card := fmt.Sprintf(`{"name":"fake","description":"d","version":"1","protocolVersion":"0.3.0","url":%q,
			"preferredTransport":"JSONRPC","capabilities":{"streaming":%t},"defaultInputModes":["text/plain"],
			"defaultOutputModes":["text/plain"],"skills":[]}`, f.url+"/rpc", o.streaming)
		app.Get("/.well-known/agent.json", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			return c.SendString(card)
		})
	} else {
		card, err := a2a.NewCard(a2a.CardConfig{Name: "fake", Description: "d", Version: "1", URL: f.url + "/rpc", Streaming: o.streaming})
		if err != nil {
			t.Fatal(err)
		}
		app.Get("/.well-known/agent-card.json", rest.ServeCard(card))
	}
	f.server = app
	go func() { _ = app.Listener(f.ln) }()
	t.Cleanup(func() {
		f.ep.CloseStreams()
		_ = app.ShutdownWithTimeout(2 * time.Second)
	})
	return f
}

// trackListener remembers its connections, so a test can drop them all.
type trackListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// dropAll closes every connection the agent accepted, mid-stream or idle.
func (l *trackListener) dropAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
	l.conns = nil
}

// broadcast wakes the waiting streams; call with mu held.
func (f *fakeAgent) broadcast() {
	close(f.wake)
	f.wake = make(chan struct{})
}

func (f *fakeAgent) view(ft *fakeTask) a2a.TaskView {
	v := a2a.TaskView{Task: ft.task, Dialect: ft.dialect}
	v.Task.History = append([]a2a.Message(nil), ft.task.History...)
	v.Task.Artifacts = append([]a2a.Artifact(nil), ft.task.Artifacts...)
	for i := range v.Task.Artifacts {
		v.Task.Artifacts[i].Parts = append([]a2a.Part(nil), v.Task.Artifacts[i].Parts...)
	}
	if n := len(ft.events); n > 0 {
		v.EventID = ft.events[n-1].ID
	}
	return v
}

// apply changes a task and logs the event for its streams; mu held.
func (f *fakeAgent) apply(ft *fakeTask, ev a2a.Event) error {
	ev.TaskID, ev.ContextID = ft.task.ID, ft.task.ContextID
	// Agents announce "submitted" in a status update (the state machine
	// calls it no move), as SDK agents commonly do.
	announce := ev.Kind == a2a.EventStatus && ev.Status.State == a2a.StateSubmitted && ft.task.Status.State == a2a.StateSubmitted
	if err := a2a.Apply(&ft.task, ev); err != nil && !announce {
		return err
	}
	ft.events = append(ft.events, a2a.StreamEvent{ID: strconv.Itoa(len(ft.events)+1) + "-0", Event: ev})
	f.broadcast()
	return nil
}

func (f *fakeAgent) Send(_ context.Context, p a2a.SendParams) (a2a.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends = append(f.sends, p)
	if p.TaskID != "" {
		ft := f.tasks[p.TaskID]
		if ft == nil {
			return a2a.TaskView{}, a2a.ErrTaskNotFound(p.TaskID)
		}
		if p.ContextID != "" && p.ContextID != ft.task.ContextID {
			return a2a.TaskView{}, a2a.InvalidParams("contextId does not match")
		}
		msg := p.Message
		msg.TaskID, msg.ContextID = ft.task.ID, ft.task.ContextID
		ft.task.History = append(ft.task.History, msg)
		if f.lazyFollowUp {
			f.broadcast()
			return f.view(ft), nil
		}
		if err := f.apply(ft, a2a.Event{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: a2a.StateWorking}}); err != nil {
			return a2a.TaskView{}, a2a.Errorf(a2a.KindUnsupportedOperation, "%v", err)
		}
		return f.view(ft), nil
	}
	id := "up-" + uuid.NewString()
	msg := p.Message
	msg.TaskID, msg.ContextID = id, "upctx-"+id
	ft := &fakeTask{dialect: p.Dialect, task: a2a.Task{ID: id, ContextID: msg.ContextID,
		Status: a2a.TaskStatus{State: a2a.StateSubmitted}, History: []a2a.Message{msg}}}
	f.tasks[id] = ft
	f.broadcast()
	return f.view(ft), nil
}

func (f *fakeAgent) GetTask(_ context.Context, id string) (a2a.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft := f.tasks[id]
	if ft == nil {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
	}
	return f.view(ft), nil
}

func (f *fakeAgent) CancelTask(_ context.Context, id string) (a2a.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft := f.tasks[id]
	if ft == nil {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
	}
	f.cancels = append(f.cancels, id)
	if err := f.apply(ft, a2a.Event{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: a2a.StateCanceled}}); err != nil {
		return a2a.TaskView{}, a2a.Errorf(a2a.KindTaskNotCancelable, "%v", err)
	}
	return f.view(ft), nil
}

func (f *fakeAgent) ListTasks(context.Context, a2a.ListParams) (a2a.ListResult, error) {
	return a2a.ListResult{}, a2a.Errorf(a2a.KindUnsupportedOperation, "not here")
}

func (f *fakeAgent) SetPushConfig(context.Context, a2a.PushConfig) (a2a.PushConfig, error) {
	return a2a.PushConfig{}, a2a.Errorf(a2a.KindPushNotSupported, "not here")
}

func (f *fakeAgent) GetPushConfig(context.Context, string, string) (a2a.PushConfig, error) {
	return a2a.PushConfig{}, a2a.Errorf(a2a.KindPushNotSupported, "not here")
}

func (f *fakeAgent) ListPushConfigs(context.Context, string) ([]a2a.PushConfig, error) {
	return nil, a2a.Errorf(a2a.KindPushNotSupported, "not here")
}

func (f *fakeAgent) DeletePushConfig(context.Context, string, string) error {
	return a2a.Errorf(a2a.KindPushNotSupported, "not here")
}

// Acquire, Current and Next make the agent its own a2a.Streamer.
func (f *fakeAgent) Acquire(context.Context) (func(), error) { return func() {}, nil }

func (f *fakeAgent) Current(ctx context.Context, id string) (a2a.TaskView, error) {
	f.mu.Lock()
	gate, err := f.subscribeGate, f.subscribeErr
	f.mu.Unlock()
	if gate != nil {
		f.subscribing <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return a2a.TaskView{}, ctx.Err()
		}
	}
	if err != nil {
		return a2a.TaskView{}, err
	}
	return f.GetTask(ctx, id)
}

func (f *fakeAgent) Next(ctx context.Context, id, after string, wait time.Duration) ([]a2a.StreamEvent, error) {
	n, _ := strconv.Atoi(strings.TrimSuffix(after, "-0"))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		f.mu.Lock()
		ft, wake := f.tasks[id], f.wake
		var out []a2a.StreamEvent
		if ft != nil && len(ft.events) > n {
			out = append(out, ft.events[n:]...)
		}
		f.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-wake:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// emit applies events to an upstream task, as the agent working on it.
func (f *fakeAgent) emit(id string, evs ...a2a.Event) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range evs {
		if err := f.apply(f.tasks[id], ev); err != nil {
			f.t.Fatalf("emit on %s: %v", id, err)
		}
	}
}

// lastSend returns the latest send the agent received.
func (f *fakeAgent) lastSend() (a2a.SendParams, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sends) == 0 {
		return a2a.SendParams{}, 0
	}
	return f.sends[len(f.sends)-1], len(f.sends)
}

// taskIDs returns the ids of the agent's tasks.
func (f *fakeAgent) taskIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.tasks {
		out = append(out, id)
	}
	return out
}

// count returns how many requests of method the agent received.
func (f *fakeAgent) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

func (f *fakeAgent) callLog() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func (f *fakeAgent) canceled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancels...)
}

// Event builders.

func working(text string) a2a.Event {
	st := &a2a.TaskStatus{State: a2a.StateWorking}
	if text != "" {
		st.Message = &a2a.Message{MessageID: uuid.NewString(), Role: a2a.RoleAgent, Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}
	}
	return a2a.Event{Kind: a2a.EventStatus, Status: st}
}

func state(s a2a.TaskState, text string) a2a.Event {
	ev := working(text)
	ev.Status.State = s
	return ev
}

func chunk(id, text string, appendIt, last bool) a2a.Event {
	return a2a.Event{Kind: a2a.EventArtifact, Artifact: &a2a.Artifact{ArtifactID: id, Name: "out",
		Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}, Append: appendIt, LastChunk: last}
}
