package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/config"
)

// sse is one event of a stream.
type sse struct {
	ID   string
	Data rpcResult
	Raw  string
}

// openStream POSTs a streaming request and returns its events as they
// come; the channel closes when the server ends the stream. cancel cuts
// the connection.
func openStream(t *testing.T, r *relay, method string, params any, headers ...string) (<-chan sse, context.CancelFunc) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if method[0] >= 'A' && method[0] <= 'Z' {
		req.Header.Set("A2A-Version", "1.0")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		cancel()
		t.Fatalf("Content-Type %q", ct)
	}
	out := make(chan sse, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.Raw = strings.TrimPrefix(line, "data: ")
				_ = json.Unmarshal([]byte(ev.Raw), &ev.Data)
			case line == "" && ev.Raw != "":
				out <- ev
				ev = sse{}
			}
		}
	}()
	return out, cancel
}

// collect reads a stream to its end (bounded).
func collect(t *testing.T, ch <-chan sse) []sse {
	t.Helper()
	var got []sse
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-timeout:
			t.Fatalf("stream did not end; got %d events", len(got))
		}
	}
}

// kindsV10 names each v1.0 stream event.
func kindsV10(t *testing.T, evs []sse) string {
	var out []string
	for _, e := range evs {
		if e.Data.Error != nil {
			out = append(out, fmt.Sprint("error", e.Data.Error.Code))
			continue
		}
		if string(e.Data.ID) != "3" || e.Data.RPC != "2.0" {
			t.Fatalf("event envelope %s", e.Raw)
		}
		out = append(out, streamKind(t, e.Data.Result))
	}
	return strings.Join(out, ",")
}

func TestStreamEachDialect(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	evs := collect(t, first(openStream(t, r, "SendStreamingMessage", map[string]any{"message": v10Message("s10", map[string]any{"metadata": demo(map[string]any{"artifactChunks": 3})})})))
	if got := kindsV10(t, evs); got != "task,working,working,artifact,artifact,artifact,completed" {
		t.Fatalf("v1.0 stream %s", got)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].ID == "" || !lessStreamID(evs[i-1].ID, evs[i].ID) {
			t.Fatalf("event ids not increasing: %q then %q", evs[i-1].ID, evs[i].ID)
		}
	}
	var chunk struct {
		ArtifactUpdate struct{ Append, LastChunk bool }
	}
	_ = json.Unmarshal(evs[5].Data.Result, &chunk)
	if !chunk.ArtifactUpdate.Append || !chunk.ArtifactUpdate.LastChunk {
		t.Fatalf("last chunk flags: %s", evs[5].Raw)
	}

	evs = collect(t, first(openStream(t, r, "message/stream", map[string]any{"message": v03Message("s03", nil)})))
	var kinds []string
	for _, e := range evs {
		var k struct {
			Kind  string
			Final bool
		}
		_ = json.Unmarshal(e.Data.Result, &k)
		kinds = append(kinds, fmt.Sprint(k.Kind, k.Final))
	}
	if got := strings.Join(kinds, ","); got != "taskfalse,status-updatefalse,status-updatefalse,artifact-updatefalse,status-updatetrue" {
		t.Fatalf("v0.3 stream %s", got)
	}

	evs = collect(t, first(openStream(t, r, "tasks/sendSubscribe", map[string]any{"id": "sse-01", "message": v01Message("s01", demo(map[string]any{"outcome": "input-required"}))})))
	var last struct {
		ID     string
		Final  bool
		Status struct{ State string }
	}
	_ = json.Unmarshal(evs[len(evs)-1].Data.Result, &last)
	if last.ID != "sse-01" || !last.Final || last.Status.State != "input-required" || len(evs) != 4 {
		t.Fatalf("v0.1 stream of %d events ends with %s", len(evs), evs[len(evs)-1].Raw)
	}
}

func first[A, B any](a A, _ B) A { return a }

func lessStreamID(a, b string) bool {
	var am, as, bm, bs int64
	fmt.Sscanf(a, "%d-%d", &am, &as)
	fmt.Sscanf(b, "%d-%d", &bm, &bs)
	return am < bm || (am == bm && as < bs)
}

func TestSubscribersSeeTheSameEventsAndResume(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("many", map[string]any{"metadata": demo(map[string]any{"steps": 8, "delayMs": 100})}),
		"configuration": map[string]any{"returnImmediately": true}}, &res)
	a, cancelA := openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID})
	defer cancelA()
	b, cancelB := openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID})
	// A third subscriber leaves after two events and comes back with Last-Event-ID.
	c, cancelC := openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID})
	before := []sse{<-c, <-c}
	cancelC()
	resumed := collect(t, first(openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID}, "Last-Event-ID", before[1].ID)))
	evA, evB := collect(t, a), collect(t, b)
	cancelB()
	// Each stream opens with the task as it stood when it subscribed (a
	// slow machine may let an event commit between the two): from the
	// later one's start on, both saw the same events.
	since := func(evs []sse, id string) []sse {
		for i, e := range evs {
			if !lessStreamID(e.ID, id) {
				return evs[i:]
			}
		}
		return nil
	}
	start := evA[0].ID
	if lessStreamID(start, evB[0].ID) {
		start = evB[0].ID
	}
	evA, evB = since(evA, start), since(evB, start)
	if kindsV10(t, evA[1:]) != kindsV10(t, evB[1:]) || len(evA) < 3 {
		t.Fatalf("subscribers differ:\n%s\n%s", kindsV10(t, evA), kindsV10(t, evB))
	}
	ids := func(evs []sse) string {
		var s []string
		for _, e := range evs {
			s = append(s, e.ID)
		}
		return strings.Join(s, ",")
	}
	if ids(evA[1:]) != ids(evB[1:]) {
		t.Fatal("subscribers got different event ids")
	}
	// before + resumed is exactly what an uninterrupted subscriber saw
	// (it started at the same point, so compare the tails).
	joined := append(before, resumed...)
	if ids(joined) != ids(evA[len(evA)-len(joined):]) {
		t.Fatalf("resume lost or repeated events:\n%s\n%s", ids(joined), ids(evA))
	}
}

func TestStreamAcrossInstances(t *testing.T) {
	t.Parallel()
	a := startRelay(t, nil)
	cfg := a.app.cfg
	cfg.Addr = "127.0.0.1:0"
	b := startWith(t, cfg) // same Redis, same prefix: a second instance
	var res struct{ Task v10Task }
	b.call("SendMessage", map[string]any{"message": v10Message("across", map[string]any{"metadata": demo(map[string]any{"steps": 6, "delayMs": 100})}),
		"configuration": map[string]any{"returnImmediately": true}}, &res)
	evs := collect(t, first(openStream(t, a, "SubscribeToTask", map[string]any{"id": res.Task.ID})))
	if k := kindsV10(t, evs); !strings.HasPrefix(k, "task,") || !strings.HasSuffix(k, ",artifact,completed") {
		t.Fatalf("instance A saw %s of a task driven by B", k)
	}
}

func TestStreamResourcesAndLimits(t *testing.T) {
	t.Parallel()
	// Keep-alives an hour apart: the stream must notice the client leaving without writing.
	r := startRelay(t, func(c *config.Config) { c.MaxStreams, c.StreamKeepAlive = 1, time.Hour })
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("long", map[string]any{"metadata": demo(map[string]any{"steps": 100, "delayMs": 100})}),
		"configuration": map[string]any{"returnImmediately": true}}, &res)
	ch, cancel := openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID})
	<-ch
	if n := r.app.streams.Open(); n != 1 {
		t.Fatalf("open streams %d", n)
	}
	// The limit refuses a second stream at once, with an error.
	refused := collect(t, first(openStream(t, r, "SubscribeToTask", map[string]any{"id": res.Task.ID})))
	if len(refused) != 1 || refused[0].Data.Error == nil || !strings.Contains(refused[0].Data.Error.Message, "too many open streams") {
		t.Fatalf("second stream: %+v", refused)
	}
	if res := r.post(`{"jsonrpc":"2.0","id":4,"method":"SubscribeToTask","params":{"id":"`+res.Task.ID+`"}}`, "A2A-Version", "1.0"); res.Status != http.StatusServiceUnavailable || res.Error == nil || res.Error.Code != jsonrpc.CodeLimited {
		t.Fatalf("second stream, answered as JSON: HTTP %d, %+v; want 503, code %d", res.Status, res.Error, jsonrpc.CodeLimited)
	}
	cancel()
	// The demo runner's claims block on the same pool: stop them, so that
	// only the stream's connection can be busy.
	r.app.demo.Close()
	deadline := time.Now().Add(5 * time.Second)
	for r.app.streams.Open() != 0 || r.app.streamRDB.PoolStats().TotalConns-r.app.streamRDB.PoolStats().IdleConns != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the client left: %d streams open, pool %+v", r.app.streams.Open(), r.app.streamRDB.PoolStats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.call("CancelTask", map[string]any{"id": res.Task.ID}, nil)
}

func TestStreamErrorsBeforeStart(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	evs := collect(t, first(openStream(t, r, "SubscribeToTask", map[string]any{"id": "missing"})))
	if len(evs) != 1 || evs[0].Data.Error == nil || evs[0].Data.Error.Code != -32001 {
		t.Fatalf("unknown task: %+v", evs)
	}
	// Without Accept: text/event-stream the error is a plain JSON-RPC answer.
	wantError(t, r.callRaw("tasks/resubscribe", map[string]any{"id": "missing"}), -32001)
	var done struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("done", nil)}, &done)
	wantError(t, r.callRaw("SubscribeToTask", map[string]any{"id": done.Task.ID}), -32004)
	// Resuming a finished task still yields what came after the resume point, then ends.
	all := readEvents(t, r, done.Task.ID)
	ids, err := r.app.rdb.XRange(context.Background(), r.app.store.EventsKey(done.Task.ID), "-", "+").Result()
	if err != nil || len(ids) != len(all) {
		t.Fatal(err)
	}
	rest := collect(t, first(openStream(t, r, "SubscribeToTask", map[string]any{"id": done.Task.ID}, "Last-Event-ID", ids[1].ID)))
	if k := kindsV10(t, rest); k != "working,artifact,completed" {
		t.Fatalf("resume of a finished task: %s", k)
	}
	wantError(t, r.callRaw("SendStreamingMessage", map[string]any{"message": v10Message("bad", map[string]any{"taskId": done.Task.ID})}), -32004)
	// A Last-Event-ID from the future would wait forever: it is refused.
	future := collect(t, first(openStream(t, r, "SubscribeToTask", map[string]any{"id": done.Task.ID}, "Last-Event-ID", "99999999999999-0")))
	if len(future) != 1 || future[0].Data.Error == nil || future[0].Data.Error.Code != -32602 {
		t.Fatalf("future Last-Event-ID: %+v", future)
	}
}
