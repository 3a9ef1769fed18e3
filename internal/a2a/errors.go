package a2a

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Kind is what went wrong with a request, in the terms of the A2A
// specification's errors (§3.3.2) and relay's own refusals, whatever the
// binding that carries it. The core (this package, ingest) returns kinds;
// each binding maps every kind to its own answer (JSON-RPC: a code and
// data; HTTP+JSON: a status and a google.rpc.Status body).
type Kind int

// The kinds of the core. Adding one: add it here, to Kinds, to the
// switches in Kind.String and Kind.Reason, and to the mapping
// of every binding; each binding has a test that fails for a kind it does
// not map.
const (
	// KindInternal: relay failed. Its details never reach the client.
	KindInternal Kind = iota
	// KindInvalidParams: the request's params do not fit the operation
	// (Error.Field names the field when one is to blame).
	KindInvalidParams
	// KindTaskNotFound: no task of that id for this client.
	KindTaskNotFound
	// KindTaskNotCancelable: the task is past canceling.
	KindTaskNotCancelable
	// KindPushNotSupported: push notifications are not offered.
	KindPushNotSupported
	// KindUnsupportedOperation: the operation is not offered here, or not
	// for this task in its state.
	KindUnsupportedOperation
	// KindContentTypeNotSupported: a part's media type is not accepted.
	KindContentTypeNotSupported
	// KindInvalidAgentResponse: an agent relay called answered outside A2A.
	KindInvalidAgentResponse
	// KindExtendedCardNotConfigured: no extended agent card is configured.
	KindExtendedCardNotConfigured
	// KindExtensionRequired: the client must support an extension.
	KindExtensionRequired
	// KindVersionNotSupported: the A2A version asked for is not spoken.
	KindVersionNotSupported
	// KindLimited: a limit refused the request: a rate, open streams
	// (Error.Limit says whose and when to retry) or a storage budget
	// (Error.Quota names it).
	KindLimited
	// KindUnauthenticated: the request carries no valid client credentials.
	KindUnauthenticated
)

// Kinds returns every kind, for the bindings' tests of their mappings.
func Kinds() []Kind {
	return []Kind{KindInternal, KindInvalidParams, KindTaskNotFound, KindTaskNotCancelable, KindPushNotSupported,
		KindUnsupportedOperation, KindContentTypeNotSupported, KindInvalidAgentResponse, KindExtendedCardNotConfigured,
		KindExtensionRequired, KindVersionNotSupported, KindLimited, KindUnauthenticated}
}

func (k Kind) String() string {
	switch k {
	case KindInternal:
		return "internal"
	case KindInvalidParams:
		return "invalid params"
	case KindTaskNotFound:
		return "task not found"
	case KindTaskNotCancelable:
		return "task not cancelable"
	case KindPushNotSupported:
		return "push notifications not supported"
	case KindUnsupportedOperation:
		return "unsupported operation"
	case KindContentTypeNotSupported:
		return "content type not supported"
	case KindInvalidAgentResponse:
		return "invalid agent response"
	case KindExtendedCardNotConfigured:
		return "extended agent card not configured"
	case KindExtensionRequired:
		return "extension support required"
	case KindVersionNotSupported:
		return "version not supported"
	case KindLimited:
		return "limited"
	case KindUnauthenticated:
		return "unauthenticated"
	}
	return "kind " + strconv.Itoa(int(k))
}

// Reason is k's google.rpc.ErrorInfo.reason, the one every binding sends:
// for the errors A2A defines, its name (domain "a2a-protocol.org"); for
// the JSON-RPC errors and authentication, the name the official SDKs
// give them in the same domain (INTERNAL_ERROR, INVALID_PARAMS,
// UNAUTHENTICATED), by which their clients tell the errors apart; for
// KindLimited, which A2A does not name, relay's LIMIT_REACHED (domain
// relay; see Domain).
func (k Kind) Reason() string {
	switch k {
	case KindInternal:
		return "INTERNAL_ERROR"
	case KindInvalidParams:
		return "INVALID_PARAMS"
	case KindTaskNotFound:
		return "TASK_NOT_FOUND"
	case KindTaskNotCancelable:
		return "TASK_NOT_CANCELABLE"
	case KindPushNotSupported:
		return "PUSH_NOTIFICATION_NOT_SUPPORTED"
	case KindUnsupportedOperation:
		return "UNSUPPORTED_OPERATION"
	case KindContentTypeNotSupported:
		return "CONTENT_TYPE_NOT_SUPPORTED"
	case KindInvalidAgentResponse:
		return "INVALID_AGENT_RESPONSE"
	case KindExtendedCardNotConfigured:
		return "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
	case KindExtensionRequired:
		return "EXTENSION_SUPPORT_REQUIRED"
	case KindVersionNotSupported:
		return "VERSION_NOT_SUPPORTED"
	case KindLimited:
		return "LIMIT_REACHED"
	case KindUnauthenticated:
		return "UNAUTHENTICATED"
	}
	return "INTERNAL_ERROR"
}

// Domain is the google.rpc.ErrorInfo.domain of k's Reason: relay's own
// for KindLimited, "a2a-protocol.org" for the others.
func (k Kind) Domain() string {
	if k == KindLimited {
		return domainRelay
	}
	return domainA2A
}

const (
	domainA2A   = "a2a-protocol.org"
	domainRelay = "relay"
)

// Error is an error of the core with its kind, safe to show to a client.
type Error struct {
	Kind    Kind
	Message string
	// Field, for KindInvalidParams made from a *FieldError: the field.
	Field *FieldError
	// Quota, for KindLimited made from a *QuotaError: the budget.
	Quota *QuotaError
	// Limit, for KindLimited made from a *LimitError: whose limit, and
	// when to retry.
	Limit *LimitError
}

func (e *Error) Error() string { return fmt.Sprintf("a2a error (%s): %s", e.Kind, e.Message) }

// Errorf returns an *Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// ErrTaskNotFound is the error for a task id relay does not know.
func ErrTaskNotFound(id string) *Error { return Errorf(KindTaskNotFound, "task not found: %s", id) }

// InvalidParams is the error for params that do not fit the method.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(KindInvalidParams, "invalid params: "+format, args...)
}

// IsKind reports whether err is (or wraps) an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// LimitScope says whose limit refused a request.
type LimitScope int

const (
	// LimitClient: the client used up its own share; others still get theirs.
	LimitClient LimitScope = iota + 1
	// LimitInstance: this relay instance is full, for every client.
	LimitInstance
)

// LimitError refuses a request because a limit is reached. It is a kind of
// the service, not of a transport: each binding says it its own way
// (JSON-RPC: CodeLimited, HTTP 429 or 503 and Retry-After).
type LimitError struct {
	Scope   LimitScope
	Message string // safe to show to the client
	// RetryAfter is when trying again may succeed (0: no hint).
	RetryAfter time.Duration
}

func (e *LimitError) Error() string { return "a2a: limit reached: " + e.Message }

// Storage budgets a QuotaError names.
const (
	// QuotaStorageBytes is a client's budget of bytes stored in Redis.
	QuotaStorageBytes = "storage_bytes"
	// QuotaTasks is a client's budget of tasks stored at once.
	QuotaTasks = "tasks"
)

// QuotaError refuses a request that would take a client past one of its
// storage budgets: nothing of the request is stored. It is a kind of the
// service; each binding says it its own way (JSON-RPC: CodeLimited, HTTP
// 429, the budget named in data).
type QuotaError struct {
	// Limit names the budget: QuotaStorageBytes or QuotaTasks.
	Limit string
	// Max is the budget; Used what the client holds, as relay counts it.
	Max, Used int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("storage budget %s reached: %d used of %d; finished tasks free their share when they expire", e.Limit, e.Used, e.Max)
}

// AsError returns err as an *Error when it is one (or wraps one), a
// *FieldError as KindInvalidParams naming the field, a *LimitError or a
// *QuotaError as KindLimited, and a generic internal error otherwise:
// internal details never reach a client.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return &Error{Kind: KindInvalidParams, Message: "invalid params: " + fe.Error(), Field: fe}, true
	}
	var le *LimitError
	if errors.As(err, &le) {
		return &Error{Kind: KindLimited, Message: le.Message, Limit: le}, true
	}
	var qe *QuotaError
	if errors.As(err, &qe) {
		return &Error{Kind: KindLimited, Message: qe.Error(), Quota: qe}, true
	}
	return &Error{Kind: KindInternal, Message: "internal error"}, false
}

// Details are e's details as google.rpc.Status carries them (v1.0 puts
// them in JSON-RPC error.data, HTTP+JSON in the error body, gRPC in the
// status), first always one google.rpc.ErrorInfo: for a storage budget
// reason QUOTA_EXCEEDED (domain relay; metadata limit, max, used),
// followed by a google.rpc.QuotaFailure; otherwise the kind's Reason
// and Domain, followed, for a refused field, by a google.rpc.BadRequest
// naming it.
func (e *Error) Details() []any {
	if q := e.Quota; q != nil {
		return []any{
			ErrorInfo{Type: typeErrorInfo, Reason: "QUOTA_EXCEEDED", Domain: domainRelay,
				Metadata: map[string]string{"limit": q.Limit, "max": strconv.FormatInt(q.Max, 10), "used": strconv.FormatInt(q.Used, 10)}},
			QuotaFailure{Type: "type.googleapis.com/google.rpc.QuotaFailure",
				Violations: []QuotaViolation{{Subject: "client:" + q.Limit, Description: q.Error()}}},
		}
	}
	details := []any{ErrorInfo{Type: typeErrorInfo, Reason: e.Kind.Reason(), Domain: e.Kind.Domain()}}
	if f := e.Field; f != nil {
		details = append(details, BadRequest{Type: "type.googleapis.com/google.rpc.BadRequest",
			FieldViolations: []FieldViolation{{Field: f.Field, Description: f.Error()}}})
	}
	return details
}

const typeErrorInfo = "type.googleapis.com/google.rpc.ErrorInfo"

// ErrorInfo is google.rpc.ErrorInfo in ProtoJSON.
type ErrorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// QuotaFailure is google.rpc.QuotaFailure in ProtoJSON.
type QuotaFailure struct {
	Type       string           `json:"@type"`
	Violations []QuotaViolation `json:"violations"`
}

// QuotaViolation is one violation of a QuotaFailure.
type QuotaViolation struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// BadRequest is google.rpc.BadRequest in ProtoJSON.
type BadRequest struct {
	Type            string           `json:"@type"`
	FieldViolations []FieldViolation `json:"fieldViolations"`
}

// FieldViolation is one violation of a BadRequest.
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}
