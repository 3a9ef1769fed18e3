package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2arelay/relay/internal/config"
)

// bearerTransport adds "Authorization: Bearer <key>" to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}

// officialRESTClient is the official Go SDK's client built from relay's
// card with only its REST transport, so it must use the card's HTTP+JSON
// interface, acting for the client of key.
func officialRESTClient(t *testing.T, r *relay, key string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: http.DefaultClient, CardParser: parseCardAroundA2AGo430}
	card, err := resolver.Resolve(ctx, r.url)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: bearerTransport(key)}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// parseCardAroundA2AGo430 parses a card as a2a-go's default parser does,
// after rewriting each v1.0 securityRequirements scope list from its
// ProtoJSON form (a StringList message: {"list":[...]}, or {} when empty,
// which is what relay serves and a2a.proto defines) to the bare array
// a2a-go v2.3.1 expects (a2aproject/a2a-go#430, open). Without it the
// official client cannot read the card of any relay that requires auth.
func parseCardAroundA2AGo430(body []byte) (*a2a.AgentCard, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	var reqs []struct {
		Schemes map[string]struct {
			List []string `json:"list"`
		} `json:"schemes"`
	}
	if raw, ok := doc["securityRequirements"]; ok {
		if err := json.Unmarshal(raw, &reqs); err != nil {
			return nil, err
		}
		bare := make([]map[string]map[string][]string, 0, len(reqs))
		for _, req := range reqs {
			schemes := map[string][]string{}
			for name, scopes := range req.Schemes {
				schemes[name] = append([]string{}, scopes.List...)
			}
			bare = append(bare, map[string]map[string][]string{"schemes": schemes})
		}
		b, err := json.Marshal(bare)
		if err != nil {
			return nil, err
		}
		doc["securityRequirements"] = b
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return agentcard.DefaultCardParser(b)
}

// officialText is a user message for the demo agent with demo options.
func officialText(text string, opts map[string]any) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	if opts != nil {
		m.Metadata = demo(opts)
	}
	return m
}

// The official Go client (a2a-go v2) over HTTP+JSON, from the card:
// send, get, list, cancel, a stream to the task's end, a subscription to
// a running task, push config create/get/list/delete, and the errors it
// maps (not found, not cancelable, another client's task, invalid params,
// unauthenticated).
func TestOfficialGoClientOverREST(t *testing.T) {
	t.Parallel()
	// The card names the address relay really listens on.
	addr := freeAddr(t)
	r := startTenantRelay(t, func(c *config.Config) { c.Addr, c.PublicURL = addr, "http://"+addr })
	alice, bob := officialRESTClient(t, r, aliceKey), officialRESTClient(t, r, bobKey)
	ctx := context.Background()

	res, err := alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: officialText("hello", nil)})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: %#v", res)
	}
	got, err := alice.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("get: %+v, %v", got, err)
	}
	list, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, Status: a2a.TaskStateCompleted, PageSize: 10})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID || list.TotalSize != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	// a2a-go sends statusTimestampAfter as lastUpdatedAfter (its v0.3 name).
	hourAgo, inAnHour := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	since, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, StatusTimestampAfter: &hourAgo, HistoryLength: new(int), IncludeArtifacts: true})
	if err != nil || len(since.Tasks) != 1 || len(since.Tasks[0].History) != 0 || len(since.Tasks[0].Artifacts) == 0 {
		t.Fatalf("list since an hour ago, without history, with artifacts: %+v, %v", since, err)
	}
	if later, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, StatusTimestampAfter: &inAnHour}); err != nil || len(later.Tasks) != 0 {
		t.Fatalf("list after an hour from now: %+v, %v", later, err)
	}
	if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob gets alice's task: %v", err)
	}
	if _, err := alice.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel of a completed task: %v", err)
	}

	var last a2a.Event
	n := 0
	for ev, err := range alice.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: officialText("stream", map[string]any{"steps": 2})}) {
		if err != nil {
			t.Fatalf("stream, after %d events: %v", n, err)
		}
		last, n = ev, n+1
	}
	if upd, ok := last.(*a2a.TaskStatusUpdateEvent); n < 3 || !ok || upd.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stream: %d events, the last %#v", n, last)
	}

	testOfficialPushConfigs(t, alice, bob, task.ID)
	testOfficialErrorKinds(t, alice, officialRESTClient(t, r, "not-a-key"), task.ID)
	testOfficialSubscribeAndCancel(t, alice)
}

// testOfficialPushConfigs drives push config create, get, list and
// delete through the official client of any transport, with bob's and a
// bad config's errors.
func testOfficialPushConfigs(t *testing.T, alice, bob *a2aclient.Client, taskID a2a.TaskID) {
	t.Helper()
	ctx := context.Background()
	created, err := alice.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: taskID, ID: "c1", URL: "http://127.0.0.1:9/hook", Token: "tok-0123456789"})
	if err != nil || created.ID != "c1" || created.TaskID != taskID || created.URL != "http://127.0.0.1:9/hook" {
		t.Fatalf("create config: %+v, %v", created, err)
	}
	got, err := alice.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: taskID, ID: "c1"})
	if err != nil || got.ID != "c1" || got.URL != created.URL {
		t.Fatalf("get config: %+v, %v", got, err)
	}
	configs, err := alice.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: taskID})
	if err != nil || len(configs) != 1 || configs[0].ID != "c1" {
		t.Fatalf("list configs: %+v, %v", configs, err)
	}
	if _, err := bob.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: taskID, ID: "c1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob gets alice's config: %v", err)
	}
	if err := alice.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: taskID, ID: "c1"}); err != nil {
		t.Fatalf("delete config: %v", err)
	}
	if _, err := alice.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: taskID, ID: "c1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("get of a deleted config: %v", err)
	}
	// Refused as invalid params, with the field named.
	if _, err := alice.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: taskID, URL: "ftp://127.0.0.1/hook"}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "url") {
		t.Fatalf("a config with an ftp URL: %v", err)
	}
}

// testOfficialErrorKinds checks that the official client of any transport
// tells relay's invalid params and missing credentials apart from an
// internal error (a2a-go's REST transport goes by the ErrorInfo reason
// alone): a negative historyLength, a pageSize over the maximum, and a
// client (anonymous) whose key relay does not know.
func testOfficialErrorKinds(t *testing.T, alice, anonymous *a2aclient.Client, taskID a2a.TaskID) {
	t.Helper()
	ctx := context.Background()
	minusOne := -1
	if _, err := alice.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID, HistoryLength: &minusOne}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("get with historyLength -1: %v", err)
	}
	if _, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1_000_000}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("list with pageSize 1000000: %v", err)
	}
	if _, err := anonymous.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("get with an unknown key: %v", err)
	}
}

// testOfficialSubscribeAndCancel subscribes to a long task, cancels it
// while subscribed, and sees the subscription start with the task and end
// with its cancellation.
func testOfficialSubscribeAndCancel(t *testing.T, alice *a2aclient.Client) {
	t.Helper()
	ctx := context.Background()
	res, err := alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: officialText("long", map[string]any{"steps": 100, "delayMs": 1000}),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	long := res.(*a2a.Task)
	var events []a2a.Event
	for ev, err := range alice.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: long.ID}) {
		if err != nil {
			t.Fatalf("subscribe, after %d events: %v", len(events), err)
		}
		events = append(events, ev)
		if len(events) == 1 {
			if first, ok := ev.(*a2a.Task); !ok || first.ID != long.ID {
				t.Fatalf("subscribe: the first event is %#v, not the task", ev)
			}
			canceled, err := alice.CancelTask(ctx, &a2a.CancelTaskRequest{ID: long.ID})
			if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("cancel: %+v, %v", canceled, err)
			}
		}
	}
	if upd, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent); !ok || upd.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("subscribe: the last of %d events is %#v", len(events), events[len(events)-1])
	}
	var after error
	for _, err := range alice.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: long.ID}) {
		if err != nil {
			after = err
			break
		}
	}
	if !errors.Is(after, a2a.ErrUnsupportedOperation) {
		t.Fatalf("subscribe to a finished task: %v", after)
	}
}
