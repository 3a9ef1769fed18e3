package grpcbind

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/a2a"
)

// service implements the A2A service over the Endpoint.
type service struct {
	a2apb.UnimplementedA2AServiceServer
	ep      *a2a.Endpoint
	log     *slog.Logger
	observe func(method string, err *a2a.Error)
}

// The core's v1.0 JSON is ProtoJSON: results are read as it reads them,
// leaving out members the proto does not have (relay's own extras).
var (
	toJSON   = protojson.MarshalOptions{}
	fromJSON = protojson.UnmarshalOptions{DiscardUnknown: true}
)

func (s *service) SendMessage(ctx context.Context, in *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	return call(s, ctx, a2a.OpSend, "SendMessage", in, &a2apb.SendMessageResponse{})
}

func (s *service) GetTask(ctx context.Context, in *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return call(s, ctx, a2a.OpGet, "GetTask", in, &a2apb.Task{})
}

func (s *service) ListTasks(ctx context.Context, in *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	return call(s, ctx, a2a.OpList, "ListTasks", in, &a2apb.ListTasksResponse{})
}

func (s *service) CancelTask(ctx context.Context, in *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	return call(s, ctx, a2a.OpCancel, "CancelTask", in, &a2apb.Task{})
}

func (s *service) CreateTaskPushNotificationConfig(ctx context.Context, in *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	return call(s, ctx, a2a.OpPushSet, "CreateTaskPushNotificationConfig", in, &a2apb.TaskPushNotificationConfig{})
}

func (s *service) GetTaskPushNotificationConfig(ctx context.Context, in *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	return call(s, ctx, a2a.OpPushGet, "GetTaskPushNotificationConfig", in, &a2apb.TaskPushNotificationConfig{})
}

func (s *service) ListTaskPushNotificationConfigs(ctx context.Context, in *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	return call(s, ctx, a2a.OpPushList, "ListTaskPushNotificationConfigs", in, &a2apb.ListTaskPushNotificationConfigsResponse{})
}

func (s *service) DeleteTaskPushNotificationConfig(ctx context.Context, in *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return call(s, ctx, a2a.OpPushDelete, "DeleteTaskPushNotificationConfig", in, &emptypb.Empty{})
}

func (s *service) GetExtendedAgentCard(ctx context.Context, in *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	return call(s, ctx, a2a.OpExtendedCard, "GetExtendedAgentCard", in, &a2apb.AgentCard{})
}

func (s *service) SendStreamingMessage(in *a2apb.SendMessageRequest, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return s.stream(a2a.OpStream, "SendStreamingMessage", in, ss)
}

func (s *service) SubscribeToTask(in *a2apb.SubscribeToTaskRequest, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return s.stream(a2a.OpSubscribe, "SubscribeToTask", in, ss)
}

// call runs one operation that is not streaming: the request as v1.0
// JSON to the Endpoint, its result back into out.
func call[T proto.Message](s *service, ctx context.Context, op a2a.Op, name string, in proto.Message, out T) (T, error) {
	var zero T
	c, err := request(ctx, op, in)
	if err != nil {
		return zero, s.fail(ctx, name, err)
	}
	res, _, err := s.ep.Do(ctx, c)
	if err != nil {
		return zero, s.fail(ctx, name, err)
	}
	if res != nil {
		b, err := json.Marshal(res)
		if err == nil {
			err = fromJSON.Unmarshal(b, out)
		}
		if err != nil {
			s.log.ErrorContext(ctx, "grpc: a result does not fit its message", "method", name, "err", err)
			return zero, s.fail(ctx, name, &a2a.Error{Kind: a2a.KindInternal, Message: "internal error"})
		}
	}
	s.report(name, nil)
	return out, nil
}

// request is the Call of op carrying in, after the version check.
func request(ctx context.Context, op a2a.Op, in proto.Message) (a2a.Call, error) {
	if v := metadata.ValueFromIncomingContext(ctx, "a2a-version"); len(v) > 0 {
		if d, ok := a2a.ParseVersion(v[0]); !ok || (d != "" && d != a2a.V10) {
			return a2a.Call{}, a2a.Errorf(a2a.KindVersionNotSupported, "A2A-Version %q is not supported over gRPC; relay speaks 1.0 here", v[0])
		}
	}
	b, err := toJSON.Marshal(in)
	if err != nil {
		return a2a.Call{}, a2a.InvalidParams("the request cannot be read: %v", err)
	}
	return a2a.Call{Op: op, Dialect: a2a.V10, Params: b}, nil
}

// stream runs a streaming operation: errors before it begins are the
// call's status; then each event is a StreamResponse, and an error that
// ends the stream (the core's read failed) is the call's status.
func (s *service) stream(op a2a.Op, name string, in proto.Message, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	ctx := ss.Context()
	c, err := request(ctx, op, in)
	if err != nil {
		return s.fail(ctx, name, err)
	}
	fr := &framer{ss: ss, log: s.log}
	st, err := s.ep.Open(ctx, c, clientConn{ctx: ctx}, fr)
	if err != nil {
		return s.fail(ctx, name, err)
	}
	s.report(name, nil)
	st.Run(bufio.NewWriterSize(nowhere{ctx}, 16))
	switch {
	case fr.end != nil:
		return statusOf(fr.end)
	case fr.sendErr != nil:
		return fr.sendErr
	case ctx.Err() != nil:
		return ctx.Err()
	case !fr.final:
		// relay is shutting down: over SSE the connection closes and the
		// client resumes; here the status says so.
		return status.Error(codes.Unavailable, "the stream ended before the task did (relay is shutting down); subscribe to the task again")
	}
	return nil
}

// framer sends each event of the core's stream as a StreamResponse, and
// keeps the error that ends it; the SSE bytes the core writes around
// them go nowhere.
type framer struct {
	ss      grpc.ServerStreamingServer[a2apb.StreamResponse]
	log     *slog.Logger
	end     *a2a.Error
	sendErr error
	// final: the last event sent leaves the task final or waiting for
	// the client, which ends a stream.
	final bool
}

// Send sends one event of the core's stream (its v1.0 JSON) as a
// StreamResponse.
func (f *framer) Send(b []byte) error {
	var ev a2apb.StreamResponse
	if err := fromJSON.Unmarshal(b, &ev); err != nil {
		f.log.Error("grpc: a stream event does not fit StreamResponse", "err", err)
		f.end = &a2a.Error{Kind: a2a.KindInternal, Message: "internal error"}
		return err
	}
	if err := f.ss.Send(&ev); err != nil {
		f.sendErr = err
		return err
	}
	f.final = ends(&ev)
	return nil
}

// Envelope is unused: Send sends each event.
func (f *framer) Envelope() (head, tail []byte) { return nil, nil }

func (f *framer) Error(_ a2a.Dialect, e *a2a.Error) []byte {
	f.end = e
	return nil
}

// ends reports whether ev leaves its task in a state that ends a stream:
// final, or waiting for the client.
func ends(ev *a2apb.StreamResponse) bool {
	st := ev.GetStatusUpdate().GetStatus().GetState()
	if t := ev.GetTask(); t != nil {
		st = t.GetStatus().GetState()
	}
	switch st {
	case a2apb.TaskState_TASK_STATE_COMPLETED, a2apb.TaskState_TASK_STATE_FAILED, a2apb.TaskState_TASK_STATE_CANCELED,
		a2apb.TaskState_TASK_STATE_REJECTED, a2apb.TaskState_TASK_STATE_INPUT_REQUIRED, a2apb.TaskState_TASK_STATE_AUTH_REQUIRED:
		return true
	}
	return false
}

// nowhere takes the SSE framing the core writes; writes fail once the
// client has left, which ends the stream at its next keep-alive.
type nowhere struct{ ctx context.Context }

func (n nowhere) Write(p []byte) (int, error) {
	if err := n.ctx.Err(); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *service) report(name string, e *a2a.Error) {
	if s.observe != nil {
		s.observe(name, e)
	}
}

// fail is the status of err.
func (s *service) fail(ctx context.Context, name string, err error) error {
	e, known := a2a.AsError(err)
	if !known {
		s.log.ErrorContext(ctx, "a2a request failed", "method", name, "err", err)
	}
	s.report(name, e)
	return statusOf(e)
}

// kindCodes maps every kind of the core to its gRPC code (spec §5.4; a test
// walks a2a.Kinds through it). A limit on the instance (not the client's)
// is Unavailable: see statusOf.
var kindCodes = map[a2a.Kind]codes.Code{
	a2a.KindInternal:                  codes.Internal,
	a2a.KindInvalidParams:             codes.InvalidArgument,
	a2a.KindTaskNotFound:              codes.NotFound,
	a2a.KindTaskNotCancelable:         codes.FailedPrecondition,
	a2a.KindPushNotSupported:          codes.FailedPrecondition,
	a2a.KindUnsupportedOperation:      codes.FailedPrecondition,
	a2a.KindContentTypeNotSupported:   codes.InvalidArgument,
	a2a.KindInvalidAgentResponse:      codes.Internal,
	a2a.KindExtendedCardNotConfigured: codes.FailedPrecondition,
	a2a.KindExtensionRequired:         codes.FailedPrecondition,
	a2a.KindVersionNotSupported:       codes.FailedPrecondition,
	a2a.KindLimited:                   codes.ResourceExhausted,
	a2a.KindUnauthenticated:           codes.Unauthenticated,
}

// statusOf is the gRPC status of e, with e's details (google.rpc types in
// ProtoJSON, turned into Any) and, when a limit says when to retry, a
// google.rpc.RetryInfo.
func statusOf(e *a2a.Error) error {
	code, ok := kindCodes[e.Kind]
	if !ok {
		code = codes.Internal
	}
	st := &spb.Status{Code: int32(code), Message: e.Message}
	for _, d := range e.Details() {
		b, err := json.Marshal(d)
		if err != nil {
			continue
		}
		var a anypb.Any
		if protojson.Unmarshal(b, &a) == nil {
			st.Details = append(st.Details, &a)
		}
	}
	if le := e.Limit; le != nil {
		if le.Scope == a2a.LimitInstance {
			st.Code = int32(codes.Unavailable)
		}
		if le.RetryAfter > 0 {
			if a, err := anypb.New(&errdetails.RetryInfo{RetryDelay: durationpb.New(le.RetryAfter)}); err == nil {
				st.Details = append(st.Details, a)
			}
		}
	}
	return status.FromProto(st).Err()
}
