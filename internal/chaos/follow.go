package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Frame is one SSE event a follower received.
type Frame struct {
	// ID is the event's SSE id (its id in the task's Redis event stream).
	ID string
	// Kind is task, status or artifact; State and Seq what it carries.
	Kind, State string
	Seq         int
	TaskID      string
	// Conn numbers the connection that brought it (1-based).
	Conn int
}

// Followed is one task a follower streamed.
type Followed struct {
	TaskID string
	// Mode is "stream" (created with SendStreamingMessage) or "subscribe"
	// (created with SendMessage, then SubscribeToTask).
	Mode   string
	Frames []Frame
	// Connects counts the streams opened; Cuts the ones the follower cut
	// on purpose; Drops the others that ended before the final event.
	Connects, Cuts, Drops int
	// Errors are the failures met on the way (informational).
	Errors []string
	// Final: the follower received the task's final event.
	Final bool
	// NotFollowed says why the task could not be followed at all (it had
	// ended before the first subscription).
	NotFollowed string
}

// Last is the SSE id of the last frame received ("" before any).
func (f *Followed) Last() string {
	if len(f.Frames) == 0 {
		return ""
	}
	return f.Frames[len(f.Frames)-1].ID
}

// Follower creates demo tasks one after another and follows each over
// SSE until its final event, reconnecting with Last-Event-ID (to another
// instance) whenever a stream ends early, and cutting some streams itself.
type Follower struct {
	Index   int
	Targets []string
	Hook    string
	// Key is the client's API key.
	Key            string
	Steps, DelayMs int
	// CutRate is the chance, after each event, that the follower drops
	// the connection itself and resumes.
	CutRate float64

	http *http.Client
	rnd  *rand.Rand

	mu    sync.Mutex
	tasks []*Followed
}

// Tasks returns a copy of what the follower followed so far.
func (f *Follower) Tasks() []Followed {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Followed, len(f.tasks))
	for i, t := range f.tasks {
		out[i] = *t
		out[i].Frames = append([]Frame(nil), t.Frames...)
		out[i].Errors = append([]string(nil), t.Errors...)
	}
	return out
}

// Run follows tasks until stop is closed, then finishes the task at hand;
// it returns when that task ended or ctx is done.
func (f *Follower) Run(ctx context.Context, stop <-chan struct{}) {
	f.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: 10 * time.Second}}
	f.rnd = rand.New(rand.NewPCG(uint64(f.Index), 42))
	for n := 0; ctx.Err() == nil; n++ {
		select {
		case <-stop:
			return
		default:
		}
		fl := &Followed{Mode: "stream"}
		if (f.Index+n)%2 == 1 {
			fl.Mode = "subscribe"
		}
		f.mu.Lock()
		f.tasks = append(f.tasks, fl)
		f.mu.Unlock()
		f.follow(ctx, fl, n)
	}
}

// errCut ends a stream the follower cut on purpose.
var errCut = errors.New("cut by the follower")

func (f *Follower) follow(ctx context.Context, fl *Followed, n int) {
	c := &client{http: &http.Client{Timeout: 10 * time.Second}, key: f.Key}
	if fl.Mode == "subscribe" {
		// Create the task first; each try goes to the next instance.
		for try := 0; ctx.Err() == nil; try++ {
			target := f.Targets[(f.Index+n+try)%len(f.Targets)]
			id, err := c.sendMessage(ctx, target, fmt.Sprintf("chaos-sse-%d-%d-%d", f.Index, n, try), f.spec(n))
			if err == nil {
				f.mu.Lock()
				fl.TaskID = id
				f.mu.Unlock()
				break
			}
			f.note(fl, "send: "+err.Error())
			sleepCtx(ctx, backoff(try+1))
		}
	}
	for conn := 1; ctx.Err() == nil; conn++ {
		f.mu.Lock()
		done, taskID, last := fl.Final, fl.TaskID, fl.Last()
		f.mu.Unlock()
		if done {
			return
		}
		target := f.Targets[(f.Index+n+conn)%len(f.Targets)]
		method, params := "SubscribeToTask", any(map[string]any{"id": taskID})
		if taskID == "" { // stream mode, not created yet
			method = "SendStreamingMessage"
			params = sendParams(fmt.Sprintf("chaos-sse-%d-%d-%d", f.Index, n, conn), f.spec(n))
		}
		err := f.stream(ctx, fl, conn, target, method, params, last)
		var re *rpcError
		switch {
		case err == nil:
			// The server ended the stream: after the final event, or because
			// it is shutting down.
		case errors.Is(err, errCut):
			f.mu.Lock()
			fl.Cuts++
			f.mu.Unlock()
			continue
		case errors.As(err, &re) && re.Code != -32603 && last == "":
			// Refused outright (for SubscribeToTask: the task ended before the
			// first subscription): nothing to follow. The check says whether
			// that was fine.
			f.mu.Lock()
			fl.NotFollowed = err.Error()
			f.mu.Unlock()
			return
		default:
			f.note(fl, fmt.Sprintf("%s on %s: %v", method, target, err))
		}
		f.mu.Lock()
		if !fl.Final {
			fl.Drops++
		}
		f.mu.Unlock()
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

// spec is the demo task of the follower's n-th follow.
func (f *Follower) spec(n int) taskSpec {
	return taskSpec{text: fmt.Sprintf("chaos sse %d/%d", f.Index, n), hook: f.Hook, steps: f.Steps, delayMs: f.DelayMs}
}

func (f *Follower) note(fl *Followed, s string) {
	f.mu.Lock()
	if len(fl.Errors) < 20 {
		fl.Errors = append(fl.Errors, s)
	}
	f.mu.Unlock()
}

// stream opens one SSE stream and records its frames until it ends. It
// returns nil when the server ended the stream, errCut when the follower
// cut it, an *rpcError when relay answered an error.
func (f *Follower) stream(ctx context.Context, fl *Followed, conn int, target, method string, params any, last string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": conn, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	if f.Key != "" {
		req.Header.Set("X-API-Key", f.Key)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	f.mu.Lock()
	fl.Connects++
	f.mu.Unlock()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var id, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && data != "":
			fr, final, err := parseFrame(id, data)
			id, data = "", ""
			if err != nil {
				return err
			}
			fr.Conn = conn
			f.mu.Lock()
			if fl.TaskID == "" && fr.Kind == "task" {
				fl.TaskID = fr.TaskID
			}
			fl.Frames = append(fl.Frames, fr)
			fl.Final = final
			f.mu.Unlock()
			if final {
				return nil
			}
			if f.rnd.Float64() < f.CutRate {
				return errCut
			}
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// parseFrame reads one v1.0 stream event.
func parseFrame(id, data string) (Frame, bool, error) {
	var r struct {
		Result *v10Notification `json:"result"` // a stream event has a notification's shape
		Error  *rpcError        `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return Frame{}, false, fmt.Errorf("stream event is not JSON: %s", truncate(data, 200))
	}
	if r.Error != nil {
		return Frame{}, false, r.Error
	}
	fr := Frame{ID: id}
	switch res := r.Result; {
	case res == nil:
		return Frame{}, false, fmt.Errorf("stream event without result: %s", truncate(data, 200))
	case res.Task != nil:
		fr.Kind, fr.TaskID, fr.State = "task", res.Task.ID, res.Task.Status.State
	case res.StatusUpdate != nil:
		fr.Kind, fr.TaskID, fr.State, fr.Seq = "status", res.StatusUpdate.TaskID, res.StatusUpdate.Status.State, res.StatusUpdate.Metadata.Seq
	case res.ArtifactUpdate != nil:
		fr.Kind, fr.TaskID, fr.Seq = "artifact", res.ArtifactUpdate.TaskID, res.ArtifactUpdate.Metadata.Seq
	default:
		return Frame{}, false, fmt.Errorf("unknown stream event: %s", truncate(data, 200))
	}
	return fr, endsStream(fr.State), nil
}

// endsStream reports whether a v1.0 state ends a stream: terminal, or
// interrupted (input or auth required).
func endsStream(state string) bool {
	switch state {
	case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED",
		"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
		return true
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
