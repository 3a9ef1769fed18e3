package grpcbind

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2arelay/relay/internal/a2a"
)

// Every kind of the core has the gRPC code of spec §5.4 (relay's own
// kinds: Unauthenticated, ResourceExhausted), and carries its ErrorInfo
// reason (in domain a2a-protocol.org but for a limit). A kind added to
// a2a.Kinds without a row here, or without a code in kindCodes, fails.
func TestEveryKindHasAGRPCCode(t *testing.T) {
	t.Parallel()
	want := map[a2a.Kind]codes.Code{
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
	for _, k := range a2a.Kinds() {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %s: no row in this test", k)
			continue
		}
		if _, mapped := kindCodes[k]; !mapped {
			t.Errorf("kind %s: no code in kindCodes", k)
		}
		st := status.Convert(statusOf(a2a.Errorf(k, "the %s message", k)))
		if st.Code() != w || st.Message() != "the "+k.String()+" message" {
			t.Errorf("kind %s: %s %q; want %s", k, st.Code(), st.Message(), w)
		}
		info, ok := only[*errdetails.ErrorInfo](st)
		if !ok || info.GetReason() != k.Reason() || info.GetDomain() != k.Domain() {
			t.Errorf("kind %s: ErrorInfo %v; want reason %q, domain %q", k, info, k.Reason(), k.Domain())
		}
	}
}

// The core's other details travel as the google.rpc messages they are: a
// refused field as BadRequest (with the ErrorInfo), a storage budget as ErrorInfo and
// QuotaFailure; a limit that says when to retry adds RetryInfo, and a
// limit of the instance (not the client's) is Unavailable.
func TestErrorDetailsAreGoogleRPCMessages(t *testing.T) {
	t.Parallel()
	field, _ := a2a.AsError(&a2a.FieldError{Field: "message.parts", Limit: 10})
	st := status.Convert(statusOf(field))
	if br, ok := only[*errdetails.BadRequest](st); !ok || br.GetFieldViolations()[0].GetField() != "message.parts" {
		t.Errorf("field error: %s %v", st.Code(), st.Details())
	}
	if info, ok := only[*errdetails.ErrorInfo](st); !ok || info.GetReason() != "INVALID_PARAMS" {
		t.Errorf("field error: %s %v", st.Code(), st.Details())
	}
	quota, _ := a2a.AsError(&a2a.QuotaError{Limit: a2a.QuotaTasks, Max: 3, Used: 3})
	st = status.Convert(statusOf(quota))
	if qf, ok := only[*errdetails.QuotaFailure](st); st.Code() != codes.ResourceExhausted || !ok || len(qf.GetViolations()) != 1 {
		t.Errorf("quota: %s %v", st.Code(), st.Details())
	}
	if info, ok := only[*errdetails.ErrorInfo](st); !ok || info.GetReason() != "QUOTA_EXCEEDED" || info.GetMetadata()["max"] != "3" {
		t.Errorf("quota: %s %v", st.Code(), st.Details())
	}
	limit, _ := a2a.AsError(&a2a.LimitError{Scope: a2a.LimitInstance, Message: "too many streams", RetryAfter: 2 * time.Second})
	st = status.Convert(statusOf(limit))
	if ri, ok := only[*errdetails.RetryInfo](st); st.Code() != codes.Unavailable || !ok || ri.GetRetryDelay().AsDuration() != 2*time.Second {
		t.Errorf("instance limit: %s %v", st.Code(), st.Details())
	}
}

// only returns the detail of type T in st.
func only[T any](st *status.Status) (T, bool) {
	for _, d := range st.Details() {
		if v, ok := d.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}
