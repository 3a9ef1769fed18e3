package app

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// withGRPC turns the gRPC server on, on a free loopback port.
func withGRPC(c *config.Config) { c.GRPCAddr = "127.0.0.1:0" }

// grpcConn dials relay's gRPC server (plaintext, loopback).
func grpcConn(t *testing.T, r *relay) *grpc.ClientConn {
	t.Helper()
	addr := r.app.GRPCAddr()
	if addr == "" {
		t.Fatal("relay serves no gRPC")
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

func grpcClient(t *testing.T, r *relay) a2apb.A2AServiceClient {
	return a2apb.NewA2AServiceClient(grpcConn(t, r))
}

// bearer is ctx carrying key as gRPC credentials ("" carries none).
func bearer(key string) context.Context {
	ctx := context.Background()
	if key == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}

// pbMessage is a user message with text and the demo agent's options.
func pbMessage(t *testing.T, text string, opts map[string]any) *a2apb.Message {
	t.Helper()
	m := &a2apb.Message{MessageId: "m-" + text, Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}
	if opts != nil {
		md, err := structpb.NewStruct(demo(opts))
		if err != nil {
			t.Fatal(err)
		}
		m.Metadata = md
	}
	return m
}

// wantGRPCError checks err's status code and, when reason is set, its
// google.rpc.ErrorInfo reason in domain a2a-protocol.org.
func wantGRPCError(t *testing.T, err error, code codes.Code, reason string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	if reason == "" {
		return
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == reason && info.Domain == "a2a-protocol.org" {
			return
		}
	}
	t.Fatalf("error %v (details %v): want an ErrorInfo with reason %s", err, st.Details(), reason)
}

// The gRPC binding serves the A2A service on a listener of its own, over
// the tasks the other bindings see: send (blocking and not), get (with
// historyLength), list with filters, cancel, the extended card, and the
// errors of spec §5.4 as statuses with their codes and ErrorInfo reasons.
func TestA2AOverGRPC(t *testing.T) {
	t.Parallel()
	r := startRelay(t, withGRPC)
	c := grpcClient(t, r)
	ctx := context.Background()

	done, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Message: pbMessage(t, "hello", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if task := done.GetTask(); task == nil || task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) == 0 {
		t.Fatalf("blocking send: %v", done)
	}

	msg := pbMessage(t, "long", map[string]any{"steps": 100, "delayMs": 100})
	msg.ContextId = "ctx-grpc"
	sent, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Message: msg,
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := sent.GetTask().GetId()
	if id == "" || sent.GetTask().GetContextId() != "ctx-grpc" || sent.GetTask().GetStatus().GetState().String() == "TASK_STATE_COMPLETED" {
		t.Fatalf("non-blocking send: %v", sent)
	}

	// The task is the one JSON-RPC sees.
	var viaRPC v10Task
	r.call("GetTask", map[string]any{"id": id}, &viaRPC)
	got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Id: id, HistoryLength: proto.Int32(0)})
	if err != nil || got.GetId() != id || viaRPC.ID != id || len(got.GetHistory()) != 0 {
		t.Fatalf("get: %v, %v (JSON-RPC: %+v)", got, err, viaRPC)
	}
	got, err = c.GetTask(ctx, &a2apb.GetTaskRequest{Id: id})
	if err != nil || len(got.GetHistory()) == 0 || got.GetHistory()[0].GetParts()[0].GetText() != "long" {
		t.Fatalf("get with history: %v, %v", got, err)
	}

	list, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{ContextId: "ctx-grpc", PageSize: proto.Int32(10), IncludeArtifacts: proto.Bool(false)})
	if err != nil || len(list.GetTasks()) != 1 || list.GetTasks()[0].GetId() != id || list.GetTotalSize() != 1 || list.GetPageSize() != 10 {
		t.Fatalf("list: %v, %v", list, err)
	}
	list, err = c.ListTasks(ctx, &a2apb.ListTasksRequest{Status: a2apb.TaskState_TASK_STATE_COMPLETED})
	if err != nil || len(list.GetTasks()) != 1 || list.GetTasks()[0].GetId() != done.GetTask().GetId() {
		t.Fatalf("list of completed tasks: %v, %v", list, err)
	}
	_, err = c.ListTasks(ctx, &a2apb.ListTasksRequest{PageSize: proto.Int32(-1)})
	wantGRPCError(t, err, codes.InvalidArgument, "")

	canceled, err := c.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: id})
	if err != nil || canceled.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("cancel: %v, %v", canceled, err)
	}
	_, err = c.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: id})
	wantGRPCError(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE")
	_, err = c.GetTask(ctx, &a2apb.GetTaskRequest{Id: "no-such-task"})
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")
	_, err = c.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: "no-such-task"})
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")
	_, err = c.GetTask(ctx, &a2apb.GetTaskRequest{Id: id, HistoryLength: proto.Int32(-1)})
	wantGRPCError(t, err, codes.InvalidArgument, "")
	_, err = c.SendMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{Role: a2apb.Role_ROLE_USER}})
	wantGRPCError(t, err, codes.InvalidArgument, "")
	_, err = c.GetTask(metadata.AppendToOutgoingContext(ctx, "a2a-version", "0.3"), &a2apb.GetTaskRequest{Id: id})
	wantGRPCError(t, err, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED")
	if _, err = c.GetTask(metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0"), &a2apb.GetTaskRequest{Id: id}); err != nil {
		t.Fatalf("a2a-version 1.0: %v", err)
	}
	_, err = c.GetExtendedAgentCard(ctx, &a2apb.GetExtendedAgentCardRequest{})
	wantGRPCError(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
}

// The extended card, when configured, is an AgentCard message.
func TestGRPCExtendedAgentCard(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.Agent.ExtendedCard = &config.ExtendedCardConfig{Description: "for clients only"}
	})
	card, err := grpcClient(t, r).GetExtendedAgentCard(context.Background(), &a2apb.GetExtendedAgentCardRequest{})
	if err != nil || card.GetDescription() != "for clients only" || card.GetName() == "" {
		t.Fatalf("extended card: %v, %v", card, err)
	}
}

// recvAll reads a stream to its end.
func recvAll(t *testing.T, s grpc.ServerStreamingClient[a2apb.StreamResponse]) ([]*a2apb.StreamResponse, error) {
	t.Helper()
	var out []*a2apb.StreamResponse
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// SendStreamingMessage and SubscribeToTask are server streams of
// StreamResponse: the task first, then its updates, ending with its final
// state; subscribing to a finished task is refused as in JSON-RPC v1.0.
func TestGRPCStreams(t *testing.T) {
	t.Parallel()
	r := startRelay(t, withGRPC)
	c := grpcClient(t, r)
	ctx := context.Background()
	s, err := c.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: pbMessage(t, "stream", map[string]any{"steps": 2})})
	if err != nil {
		t.Fatal(err)
	}
	events, err := recvAll(t, s)
	if err != nil {
		t.Fatalf("stream: %v after %v", err, events)
	}
	if len(events) < 2 || events[0].GetTask() == nil || events[len(events)-1].GetStatusUpdate() == nil {
		t.Fatalf("events: %v", events)
	}
	if st := events[len(events)-1].GetStatusUpdate().GetStatus().GetState(); st != a2apb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("last event: %v", events[len(events)-1])
	}
	id := events[0].GetTask().GetId()
	sub, err := c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: id})
	if err == nil {
		_, err = recvAll(t, sub)
	}
	wantGRPCError(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	sub, err = c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: "no-such-task"})
	if err == nil {
		_, err = recvAll(t, sub)
	}
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")

	// A running task: the subscription follows it to its end.
	sent, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Message: pbMessage(t, "follow", map[string]any{"steps": 3, "delayMs": 50}),
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err = c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: sent.GetTask().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	events, err = recvAll(t, sub)
	if err != nil || len(events) == 0 || events[0].GetTask().GetId() != sent.GetTask().GetId() {
		t.Fatalf("subscription: %v, %v", events, err)
	}
	last := events[len(events)-1]
	if last.GetStatusUpdate().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED &&
		last.GetTask().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("subscription ends with %v", last)
	}
}

// Push configs over gRPC: create, get, list and delete, then the config
// is gone.
func TestGRPCPushConfigs(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	})
	c := grpcClient(t, r)
	ctx := context.Background()
	sent, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Message: pbMessage(t, "push", nil)})
	if err != nil {
		t.Fatal(err)
	}
	task := sent.GetTask().GetId()
	created, err := c.CreateTaskPushNotificationConfig(ctx, &a2apb.TaskPushNotificationConfig{TaskId: task, Id: "c1",
		Url: "http://127.0.0.1:9/hook", Token: "secret-token-123"})
	if err != nil || created.GetId() != "c1" || created.GetTaskId() != task || created.GetUrl() != "http://127.0.0.1:9/hook" {
		t.Fatalf("create: %v, %v", created, err)
	}
	if created.GetToken() == "secret-token-123" {
		t.Errorf("the token comes back unmasked")
	}
	one, err := c.GetTaskPushNotificationConfig(ctx, &a2apb.GetTaskPushNotificationConfigRequest{TaskId: task, Id: "c1"})
	if err != nil || one.GetId() != "c1" {
		t.Fatalf("get: %v, %v", one, err)
	}
	list, err := c.ListTaskPushNotificationConfigs(ctx, &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: task})
	if err != nil || len(list.GetConfigs()) != 1 || list.GetConfigs()[0].GetId() != "c1" {
		t.Fatalf("list: %v, %v", list, err)
	}
	if _, err := c.DeleteTaskPushNotificationConfig(ctx, &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: task, Id: "c1"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.GetTaskPushNotificationConfig(ctx, &a2apb.GetTaskPushNotificationConfigRequest{TaskId: task, Id: "c1"})
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")
	_, err = c.CreateTaskPushNotificationConfig(ctx, &a2apb.TaskPushNotificationConfig{TaskId: task, Url: "ftp://127.0.0.1/hook"})
	wantGRPCError(t, err, codes.InvalidArgument, "")
}

// The gRPC service sits behind the guard of the HTTP bindings: without
// credentials (or with wrong ones) Unauthenticated; a client sees only its
// own tasks, another's answering as one that does not exist, and shares
// its task space with JSON-RPC. Health and reflection need no credentials.
func TestGRPCIsGuardedAndIsolatedAsJSONRPC(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, withGRPC)
	cc := grpcConn(t, r)
	c := a2apb.NewA2AServiceClient(cc)

	_, err := c.ListTasks(bearer(""), &a2apb.ListTasksRequest{})
	wantGRPCError(t, err, codes.Unauthenticated, "")
	_, err = c.ListTasks(bearer(otherWrng), &a2apb.ListTasksRequest{})
	wantGRPCError(t, err, codes.Unauthenticated, "")
	s, err := c.SendStreamingMessage(bearer(""), &a2apb.SendMessageRequest{Message: pbMessage(t, "anon", nil)})
	if err == nil {
		_, err = recvAll(t, s)
	}
	wantGRPCError(t, err, codes.Unauthenticated, "")

	sent, err := c.SendMessage(bearer(aliceKey), &a2apb.SendMessageRequest{Message: pbMessage(t, "mine", nil)})
	if err != nil {
		t.Fatal(err)
	}
	id := sent.GetTask().GetId()
	if _, err := c.GetTask(bearer(aliceKey), &a2apb.GetTaskRequest{Id: id}); err != nil {
		t.Fatalf("alice gets her task: %v", err)
	}
	_, err = c.GetTask(bearer(bobKey), &a2apb.GetTaskRequest{Id: id})
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")
	_, err = c.CancelTask(bearer(bobKey), &a2apb.CancelTaskRequest{Id: id})
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")
	sub, err := c.SubscribeToTask(bearer(bobKey), &a2apb.SubscribeToTaskRequest{Id: id})
	if err == nil {
		_, err = recvAll(t, sub)
	}
	wantGRPCError(t, err, codes.NotFound, "TASK_NOT_FOUND")
	list, err := c.ListTasks(bearer(bobKey), &a2apb.ListTasksRequest{})
	if err != nil || len(list.GetTasks()) != 0 {
		t.Fatalf("bob lists alice's tasks: %v, %v", list, err)
	}
	if res := as(r, aliceKey, "GetTask", map[string]any{"id": id}); res.Error != nil {
		t.Fatalf("alice's gRPC task over JSON-RPC: %+v", res.Error)
	}
	if res := as(r, bobKey, "GetTask", map[string]any{"id": id}); res.Error == nil {
		t.Fatal("bob reads alice's gRPC task over JSON-RPC")
	}

	h, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "lf.a2a.v1.A2AService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v, %v", h, err)
	}
	rs, err := reflectpb.NewServerReflectionClient(cc).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	res, err := rs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	_ = rs.CloseSend()
	found := false
	for _, svc := range res.GetListServicesResponse().GetService() {
		found = found || svc.GetName() == "lf.a2a.v1.A2AService"
	}
	if !found {
		t.Fatalf("reflection lists %v", res.GetListServicesResponse().GetService())
	}
}

// The client's rate limit holds on gRPC as on JSON-RPC: ResourceExhausted.
func TestGRPCIsRateLimitedAsJSONRPC(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.Security.RateLimit = 1
	})
	c := grpcClient(t, r)
	limited := 0
	for range 10 {
		_, err := c.ListTasks(bearer(aliceKey), &a2apb.ListTasksRequest{})
		if err != nil {
			wantGRPCError(t, err, codes.ResourceExhausted, "")
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("10 calls at a limit of 1/s: none refused")
	}
}

// A gRPC address relay cannot listen on fails Start; so does an HTTP
// address taken after the gRPC server started, and Start then stops the
// gRPC server (its port is free again).
func TestStartFailsWhenAnAddressIsTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	_ = free.Close()
	for _, tc := range []struct{ name, http, grpc string }{
		{"grpc", "127.0.0.1:0", taken.Addr().String()},
		{"http", taken.Addr().String(), freeAddr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, prefix := redistest.New(t)
			cfg := testConfig(t)
			cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
			cfg.Addr, cfg.GRPCAddr = tc.http, tc.grpc
			a, err := New(Deps{Log: testLogger()}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := a.Start(ctx); err == nil {
				_ = a.Shutdown(ctx)
				t.Fatal("Start succeeded on a taken address")
			}
			ln, err := net.Listen("tcp", freeAddr)
			if err != nil {
				t.Fatalf("the gRPC port is still held after Start failed: %v", err)
			}
			_ = ln.Close()
		})
	}
}

// A remote address that keeps failing authentication over gRPC is
// refused with ResourceExhausted, as on the HTTP bindings; an API key in
// the API key header (metadata x-api-key) is as good as a bearer one.
func TestGRPCFailedAuthenticationsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.Security.AuthFailureLimit = 3
	})
	c := grpcClient(t, r)
	sent, err := c.SendMessage(metadata.AppendToOutgoingContext(context.Background(), "x-api-key", aliceKey),
		&a2apb.SendMessageRequest{Message: pbMessage(t, "by header", nil)})
	if err != nil || sent.GetTask().GetId() == "" {
		t.Fatalf("x-api-key: %v, %v", sent, err)
	}
	refused := 0
	for range 40 {
		_, err := c.GetTask(bearer(otherWrng), &a2apb.GetTaskRequest{Id: "x"})
		switch status.Code(err) {
		case codes.Unauthenticated:
		case codes.ResourceExhausted:
			refused++
		default:
			t.Fatalf("a wrong key: %v", err)
		}
	}
	if refused == 0 {
		t.Fatal("40 wrong keys at a limit of 3 a second: none refused")
	}
}
