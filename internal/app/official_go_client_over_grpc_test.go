package app

import (
	"context"
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// bearerCreds sends an API key as "authorization: Bearer <key>" on every
// call (plaintext: the tests run on loopback).
type bearerCreds string

func (b bearerCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearerCreds) RequireTransportSecurity() bool { return false }

// officialGRPCClient is the official Go SDK's client over its gRPC
// transport, acting for the client of key.
func officialGRPCClient(t *testing.T, r *relay, key string) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{{URL: r.app.GRPCAddr(), ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version}},
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(bearerCreds(key))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// The official Go client (a2a-go v2) over gRPC: a blocking send, a get,
// a stream to the task's end, another client's task not found, list,
// cancel, push config create/get/list/delete, invalid params and
// unauthenticated, and a subscription to a running task (the same helpers
// as over HTTP+JSON).
func TestOfficialGoClientOverGRPC(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, withGRPC)
	alice, bob := officialGRPCClient(t, r, aliceKey), officialGRPCClient(t, r, bobKey)
	ctx := context.Background()

	res, err := alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
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
	if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob gets alice's task: %v", err)
	}

	var last a2a.Event
	n := 0
	for ev, err := range alice.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream"))}) {
		if err != nil {
			t.Fatalf("stream, after %d events: %v", n, err)
		}
		last, n = ev, n+1
	}
	upd, ok := last.(*a2a.TaskStatusUpdateEvent)
	if n < 2 || !ok || upd.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stream: %d events, the last %#v", n, last)
	}

	list, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, Status: a2a.TaskStateCompleted, PageSize: 10})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID || list.TotalSize != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if _, err := alice.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel of a completed task: %v", err)
	}
	testOfficialPushConfigs(t, alice, bob, task.ID)
	testOfficialErrorKinds(t, alice, officialGRPCClient(t, r, "not-a-key"), task.ID)
	testOfficialSubscribeAndCancel(t, alice)
}
