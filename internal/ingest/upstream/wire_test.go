package upstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/redistest"
)

// scripted is a hand-rolled v0.3 agent: its card, and a JSON-RPC endpoint
// that answers each request with the test's script.
type scripted struct {
	url   string
	mu    sync.Mutex
	calls []string
}

func startScripted(t *testing.T, streaming bool, answer func(w http.ResponseWriter, r *http.Request, method, id string, n int)) *scripted {
	t.Helper()
	s := &scripted{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/.well-known/agent-card.json" {
			fmt.Fprintf(w, `{"name":"scripted","protocolVersion":"0.3.0","url":"http://%s/rpc","capabilities":{"streaming":%t}}`, r.Host, streaming)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, req.Method)
		n := 0
		for _, c := range s.calls {
			if c == req.Method {
				n++
			}
		}
		s.mu.Unlock()
		answer(w, r, req.Method, string(req.ID), n)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *scripted) callLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func rpcResult(w http.ResponseWriter, id, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func rpcFailure(w http.ResponseWriter, id string, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

const replyMessage = `{"kind":"message","messageId":"r1","role":"agent","parts":[{"kind":"text","text":"hi there"}]}`

// An agent that answers with a message and no task completes our task
// with that message.
func TestMessageReplyCompletes(t *testing.T) {
	t.Parallel()
	agent := startScripted(t, false, func(w http.ResponseWriter, _ *http.Request, _, id string, _ int) {
		rpcResult(w, id, replyMessage)
	})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: agent.url})

	v := s.send(t, "hello")
	final := s.waitState(t, v.Task.ID, a2a.StateCompleted)
	want := []string{"task", "working", "completed:hi there"}
	if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	if m := final.Status.Message; m.MessageID != "r1" || m.Role != a2a.RoleAgent || m.TaskID != v.Task.ID {
		t.Errorf("final message = %+v", m)
	}
}

// A JSON-RPC error that no retry can fix fails the task at once (RetryFor
// is an hour); an internal error is retried until the call succeeds.
func TestUpstreamErrors(t *testing.T) {
	t.Parallel()
	t.Run("permanent", func(t *testing.T) {
		t.Parallel()
		agent := startScripted(t, false, func(w http.ResponseWriter, _ *http.Request, _, id string, _ int) {
			rpcFailure(w, id, jsonrpc.CodeInvalidParams, "invalid params: message.parts: bad")
		})
		rdb, prefix := redistest.New(t)
		s := newStack(rdb, prefix, 3*time.Second)
		s.startBridge(t, Config{URL: agent.url, RetryFor: time.Hour})
		v := s.send(t, "hello")
		final := s.waitState(t, v.Task.ID, a2a.StateFailed)
		want := "upstream agent at " + agent.url + ": sending the message: message/send: JSON-RPC error -32602: invalid params: message.parts: bad"
		if got := texts(final.Status.Message.Parts); got != want {
			t.Errorf("message:\n got %q\nwant %q", got, want)
		}
		if got := agent.callLog(); !slices.Equal(got, []string{"message/send"}) {
			t.Errorf("calls = %q, want one message/send", got)
		}
	})
	t.Run("transient", func(t *testing.T) {
		t.Parallel()
		agent := startScripted(t, false, func(w http.ResponseWriter, _ *http.Request, _, id string, n int) {
			if n <= 2 {
				rpcFailure(w, id, jsonrpc.CodeInternal, "busy")
				return
			}
			rpcResult(w, id, replyMessage)
		})
		rdb, prefix := redistest.New(t)
		s := newStack(rdb, prefix, 3*time.Second)
		s.startBridge(t, Config{URL: agent.url})
		v := s.send(t, "hello")
		s.waitState(t, v.Task.ID, a2a.StateCompleted)
		if got := agent.callLog(); len(got) != 3 {
			t.Errorf("calls = %q, want three message/send", got)
		}
	})
}

// A v0.3 streaming agent whose streams go silent (no keep-alives): each
// ends after StreamIdle, resubscribes are tried, then polling finishes
// the task. The events are v0.3 objects with their kind.
func TestSilentStreamV03(t *testing.T) {
	t.Parallel()
	task := func(state string) string {
		return `{"kind":"task","id":"up1","contextId":"c1","status":{"state":"` + state + `"},` +
			`"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"one"}]}]}`
	}
	agent := startScripted(t, true, func(w http.ResponseWriter, r *http.Request, method, id string, _ int) {
		switch method {
		case "message/stream", "tasks/resubscribe":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, ": hello\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\r\ndata: \"result\":%s}\r\n\r\n", id, task("working"))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // then silence
		case "tasks/get":
			rpcResult(w, id, task("completed"))
		default:
			rpcFailure(w, id, jsonrpc.CodeMethodNotFound, method)
		}
	})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	s.startBridge(t, Config{URL: agent.url, StreamIdle: 100 * time.Millisecond, Resubscribes: 2})

	v := s.send(t, "hello")
	s.waitState(t, v.Task.ID, a2a.StateCompleted)
	want := []string{"task", "artifact:a1:one", "working", "completed"}
	if got := summary(s.events(t, v.Task.ID)); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	calls := agent.callLog()
	if len(calls) < 4 || !slices.Equal(calls[:4], []string{"message/stream", "tasks/resubscribe", "tasks/resubscribe", "tasks/get"}) {
		t.Errorf("calls = %q", calls)
	}
	if strings.Contains(strings.Join(calls, " "), "SendStreamingMessage") {
		t.Error("a v0.3 agent was called with v1.0 methods")
	}
}
