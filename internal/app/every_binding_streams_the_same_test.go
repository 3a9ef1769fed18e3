package app

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// This file adds streams to the table of every_binding_behaves_the_same:
// a streaming send, a subscription, a resumed subscription and their
// errors, each event normalized to the canonical v1.0 model (gRPC's
// StreamResponse through ProtoJSON, SSE's data as it is) so that the
// same demo task gives the same sequence on every binding.
//
// Resuming: JSON-RPC and HTTP+JSON carry each event's id in SSE and take
// Last-Event-ID back; a gRPC StreamResponse carries no id, so a gRPC
// client that reconnects subscribes again, and gets the task as it stands
// first, then the rest (README, gRPC). The rows on resuming say so with
// a gRPC outcome of their own.

// streamBinding is the streaming side of a binding.
type streamBinding interface {
	streamSend(key string, a eqSendArgs) eqStream
	// subscribe subscribes to task id; lastEventID, when not "", resumes
	// after that event (only where resumes is true).
	subscribe(key, id, lastEventID string) eqStream
	resumes() bool
}

// eqItem is one item of a stream: a normalized event (with its SSE id,
// "" on gRPC) or the error kind that ended the stream.
type eqItem struct{ id, task, ev, kind string }

func (i eqItem) String() string {
	if i.kind != "" {
		return i.kind
	}
	return i.ev
}

// eqStream is an open stream; stop leaves it.
type eqStream struct {
	items <-chan eqItem
	stop  func()
}

// next waits for the stream's next item; ok is false at its end.
func (s eqStream) next(t *testing.T) (eqItem, bool) {
	t.Helper()
	select {
	case it, ok := <-s.items:
		return it, ok
	case <-time.After(time.Minute):
		t.Fatal("no stream event within a minute")
		return eqItem{}, false
	}
}

// rest reads the stream to its end.
func (s eqStream) rest(t *testing.T) []eqItem {
	t.Helper()
	defer s.stop()
	var out []eqItem
	for {
		it, ok := s.next(t)
		if !ok {
			return out
		}
		out = append(out, it)
	}
}

func eqJoin(items []eqItem) string {
	var s []string
	for _, it := range items {
		s = append(s, it.String())
	}
	return strings.Join(s, " | ")
}

// eqOne is a stream of one item.
func eqOne(it eqItem) eqStream {
	ch := make(chan eqItem, 1)
	ch <- it
	close(ch)
	return eqStream{items: ch, stop: func() {}}
}

func eqText(parts []struct{ Text string }) string {
	var s []string
	for _, p := range parts {
		s = append(s, p.Text)
	}
	return strings.Join(s, "")
}

// eqNorm normalizes one v1.0 StreamResponse (ProtoJSON) to a line naming
// what a client sees of it.
func eqNorm(raw []byte) eqItem {
	var sr struct {
		Task *struct {
			ID                 string
			Status             struct{ State string }
			History, Artifacts []json.RawMessage
		}
		StatusUpdate *struct {
			TaskID string
			Status struct {
				State   string
				Message *struct{ Parts []struct{ Text string } }
			}
		}
		ArtifactUpdate *struct {
			TaskID            string
			Append, LastChunk bool
			Artifact          struct {
				Name  string
				Parts []struct{ Text string }
			}
		}
		Message *struct {
			Role  string
			Parts []struct{ Text string }
		}
	}
	if err := json.Unmarshal(raw, &sr); err != nil {
		return eqItem{kind: fmt.Sprintf("not a StreamResponse: %s", raw)}
	}
	switch {
	case sr.Task != nil:
		return eqItem{task: sr.Task.ID, ev: fmt.Sprintf("task %s (history %d, artifacts %d)", sr.Task.Status.State, len(sr.Task.History), len(sr.Task.Artifacts))}
	case sr.StatusUpdate != nil:
		s := "status " + sr.StatusUpdate.Status.State
		if m := sr.StatusUpdate.Status.Message; m != nil {
			s += " " + strconvQuote(eqText(m.Parts))
		}
		return eqItem{task: sr.StatusUpdate.TaskID, ev: s}
	case sr.ArtifactUpdate != nil:
		a := sr.ArtifactUpdate
		return eqItem{task: a.TaskID, ev: fmt.Sprintf("artifact %s append=%t last=%t %s", a.Artifact.Name, a.Append, a.LastChunk, strconvQuote(eqText(a.Artifact.Parts)))}
	case sr.Message != nil:
		return eqItem{ev: fmt.Sprintf("message %s %s", sr.Message.Role, strconvQuote(eqText(sr.Message.Parts)))}
	}
	return eqItem{kind: fmt.Sprintf("not a StreamResponse: %s", raw)}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// eqSSE reads an SSE response; parse turns each data line into an item.
func eqSSE(resp *http.Response, cancel context.CancelFunc, parse func(data []byte) eqItem) eqStream {
	ch := make(chan eqItem, 100)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		id := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				it := parse([]byte(v))
				it.id, id = id, ""
				ch <- it
			}
		}
	}()
	return eqStream{items: ch, stop: cancel}
}

// eqOpen sends a request whose answer is SSE, or an error answered as
// the binding answers errors (refused: the error's item).
func eqOpen(method, u string, body any, refused func(st int, raw []byte) eqItem, parse func([]byte) eqItem, headers ...string) eqStream {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		cancel()
		return eqOne(eqItem{kind: "request: " + err.Error()})
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] != "" {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return eqOne(eqItem{kind: "transport: " + err.Error()})
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer cancel()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return eqOne(refused(resp.StatusCode, raw))
	}
	return eqSSE(resp, cancel, parse)
}

// ---- JSON-RPC ----

func (b jsonrpcBinding) open(key, method string, params any, lastEventID string) eqStream {
	refused := func(st int, raw []byte) eqItem {
		var res rpcResult
		if json.Unmarshal(raw, &res) != nil || res.Error == nil {
			return eqItem{kind: fmt.Sprintf("HTTP %d, not a JSON-RPC error: %s", st, raw)}
		}
		return eqItem{kind: eqRPCKind(res.Error.Code, st, res.Error.Message, res.Error.Data)}
	}
	parse := func(data []byte) eqItem {
		var res rpcResult
		if err := json.Unmarshal(data, &res); err != nil || string(res.ID) != "1" {
			return eqItem{kind: fmt.Sprintf("not a JSON-RPC answer to id 1: %s", data)}
		}
		if res.Error != nil {
			return eqItem{kind: eqRPCKind(res.Error.Code, 0, res.Error.Message, res.Error.Data)}
		}
		return eqNorm(res.Result)
	}
	return eqOpen(http.MethodPost, b.url+"/", map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
		refused, parse, "Content-Type", "application/json", "A2A-Version", cmp.Or(b.version, "1.0"),
		"Authorization", eqAuth(key), "Last-Event-ID", lastEventID)
}

func (b jsonrpcBinding) streamSend(key string, a eqSendArgs) eqStream {
	return b.open(key, "SendStreamingMessage", eqV10Send(a), "")
}

func (b jsonrpcBinding) subscribe(key, id, lastEventID string) eqStream {
	return b.open(key, "SubscribeToTask", map[string]any{"id": id}, lastEventID)
}

func (jsonrpcBinding) resumes() bool { return true }

func (b jsonrpcBinding) extendedCard(key string) string {
	return b.do(key, "GetExtendedAgentCard", map[string]any{}, nil)
}

func (b jsonrpcBinding) withVersion(v string) binding { b.version = v; return b }

// ---- HTTP+JSON ----

func (b restBinding) open(key, method, path string, body any, lastEventID string) eqStream {
	refused := func(st int, raw []byte) eqItem { return eqItem{kind: eqRESTKind(st, raw)} }
	parse := func(data []byte) eqItem {
		var e struct{ Error *struct{ Code int } }
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			return eqItem{kind: eqRESTKind(e.Error.Code, data)}
		}
		return eqNorm(data)
	}
	headers := []string{"A2A-Version", cmp.Or(b.version, "1.0"), "Authorization", eqAuth(key), "Last-Event-ID", lastEventID}
	if body != nil {
		headers = append(headers, "Content-Type", "application/a2a+json")
	}
	return eqOpen(method, b.url+"/v1"+path, body, refused, parse, headers...)
}

func (b restBinding) streamSend(key string, a eqSendArgs) eqStream {
	return b.open(key, http.MethodPost, "/message:stream", eqV10Send(a), "")
}

func (b restBinding) subscribe(key, id, lastEventID string) eqStream {
	return b.open(key, http.MethodGet, "/tasks/"+url.PathEscape(id)+":subscribe", nil, lastEventID)
}

func (restBinding) resumes() bool { return true }

func (b restBinding) extendedCard(key string) string {
	return b.do(key, http.MethodGet, "/extendedAgentCard", nil, nil)
}

func (b restBinding) withVersion(v string) binding { b.version = v; return b }

// ---- gRPC ----

// eqRecv reads a server stream; an error status ends it as an item.
func eqRecv(s grpc.ServerStreamingClient[a2apb.StreamResponse], cancel context.CancelFunc) eqStream {
	ch := make(chan eqItem, 100)
	go func() {
		defer close(ch)
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				ch <- eqItem{kind: eqGRPCKind(err)}
				return
			}
			raw, err := protojson.Marshal(ev)
			if err != nil {
				ch <- eqItem{kind: "protojson: " + err.Error()}
				return
			}
			ch <- eqNorm(raw)
		}
	}()
	return eqStream{items: ch, stop: cancel}
}

func (b grpcBinding) streamSend(key string, a eqSendArgs) eqStream {
	md, err := structpb.NewStruct(demo(eqDemo(a)))
	if err != nil {
		return eqOne(eqItem{kind: err.Error()})
	}
	msg := &a2apb.Message{MessageId: eqMessageID(), Role: a2apb.Role_ROLE_USER, ContextId: a.contextID, TaskId: a.taskID,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hello"}}}, Metadata: md}
	ctx, cancel := context.WithCancel(b.ctx(key))
	s, err := b.c.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: msg, Configuration: eqPBConfig(a)})
	if err != nil {
		cancel()
		return eqOne(eqItem{kind: eqGRPCKind(err)})
	}
	return eqRecv(s, cancel)
}

// subscribe subscribes; gRPC has no resume (lastEventID is not sent).
func (b grpcBinding) subscribe(key, id, _ string) eqStream {
	ctx, cancel := context.WithCancel(b.ctx(key))
	s, err := b.c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: id})
	if err != nil {
		cancel()
		return eqOne(eqItem{kind: eqGRPCKind(err)})
	}
	return eqRecv(s, cancel)
}

func (grpcBinding) resumes() bool { return false }

func (b grpcBinding) extendedCard(key string) string {
	_, err := b.c.GetExtendedAgentCard(b.ctx(key), &a2apb.GetExtendedAgentCardRequest{})
	return eqGRPCKind(err)
}

func (b grpcBinding) withVersion(v string) binding { b.version = v; return b }
