package workerapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
)

// fakePull accepts everything and records what reached it.
type fakePull struct {
	posted []a2a.Event
	key    string
}

func (*fakePull) Lease() time.Duration { return time.Second }
func (*fakePull) Claim(context.Context, string, string, time.Duration) (*ingest.Claimed, error) {
	return nil, nil
}
func (*fakePull) Heartbeat(context.Context, string, string) (ingest.Beat, error) {
	return ingest.Beat{State: a2a.StateWorking}, nil
}
func (f *fakePull) PostOnce(_ context.Context, taskID, _, key string, evs []a2a.Event) (ingest.Posted, error) {
	f.key = key
	f.posted = evs
	return ingest.Posted{State: a2a.StateWorking}, nil
}
func (*fakePull) Release(context.Context, string, string) error { return nil }

const fuzzToken = "fuzz-token-0123456789"

func newTestApp(p Pull) *fiber.App {
	f := fiber.New(fiber.Config{DisableStartupMessage: true})
	a, err := New(Deps{Pull: p, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Config{Tokens: []string{fuzzToken}})
	if err != nil {
		panic(err)
	}
	a.Register(f)
	return f
}

// Any body, path and version header gets a JSON answer with a documented
// status, never a panic; every event that reaches the backend names the
// task of the URL.
func FuzzWorkerRequests(f *testing.F) {
	f.Add("events", "1.0", `{"leaseId":"l","events":[{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}]}`)
	f.Add("events", "0.3", `{"leaseId":"l","events":[{"kind":"artifact-update","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]}}]}`)
	f.Add("events", "", `{"leaseId":"l","events":[{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true}}]}`)
	f.Add("heartbeat", "", `{"leaseId":"l"}`)
	f.Add("claim", "0.3", `{"workerId":"w","waitSeconds":0}`)
	f.Add("release", "2.0", `{"leaseId":5}`)
	f.Add("events", "1.0", `{"leaseId":"l","events":[null,[],"x",{"statusUpdate":null}]}`)
	app := newTestApp(&fakePull{})
	ops := []string{"events", "heartbeat", "claim", "release"}
	f.Fuzz(func(t *testing.T, op, version, body string) {
		if len(op) > 0 {
			op = ops[int(op[0])%len(ops)]
		}
		version = strings.Map(func(r rune) rune {
			if r < 0x20 || r > 0x7e {
				return -1
			}
			return r
		}, version)
		p := &fakePull{}
		app := app
		if op == "events" {
			app = newTestApp(p)
		}
		path := "/v1/tasks/t1/" + op
		if op == "claim" {
			path = "/v1/queues/q/claim"
		}
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fuzzToken)
		req.Header.Set("A2A-Version", version)
		resp, err := app.Test(req, 5000)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		switch resp.StatusCode {
		case 200, 204, 404:
		case 400, 401, 409, 422, 503:
			var e struct{ Error, Code string }
			if json.Unmarshal(raw, &e) != nil || e.Error == "" || e.Code == "" {
				t.Fatalf("%d answer without the error shape: %s", resp.StatusCode, raw)
			}
		default:
			t.Fatalf("status %d for %s %q: %s", resp.StatusCode, op, body, raw)
		}
		for _, ev := range p.posted {
			if ev.TaskID != "t1" {
				t.Fatalf("an event for task %q reached the backend from /v1/tasks/t1/events", ev.TaskID)
			}
		}
	})
}
