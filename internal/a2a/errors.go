package a2a

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// JSON-RPC and A2A error codes (PROTOCOL.md §7).
const (
	CodeParseError            = -32700
	CodeInvalidRequest        = -32600
	CodeMethodNotFound        = -32601
	CodeInvalidParams         = -32602
	CodeInternal              = -32603
	CodeTaskNotFound          = -32001
	CodeTaskNotCancelable     = -32002
	CodePushNotSupported      = -32003
	CodeUnsupportedOperation  = -32004
	CodeContentTypeNotSupport = -32005
	CodeInvalidAgentResponse  = -32006
	CodeExtendedCardNotConfig = -32007
	CodeExtensionRequired     = -32008
	CodeVersionNotSupported   = -32009
	// CodeLimited (server-defined range) refuses a request because a limit
	// is reached: a rate, open streams, or a client's storage budget. The
	// HTTP status says whose (429 the client's, 503 the instance's),
	// Retry-After when to retry; a storage budget names itself in data.
	CodeLimited = -32029
	// CodeUnauthenticated (server-defined range) refuses a request that
	// carries no valid client credentials; HTTP 401 says the same.
	CodeUnauthenticated = -32040
)

// reasons names each A2A error code as v1.0 ErrorInfo.reason does.
var reasons = map[int]string{
	CodeTaskNotFound:          "TASK_NOT_FOUND",
	CodeTaskNotCancelable:     "TASK_NOT_CANCELABLE",
	CodePushNotSupported:      "PUSH_NOTIFICATION_NOT_SUPPORTED",
	CodeUnsupportedOperation:  "UNSUPPORTED_OPERATION",
	CodeContentTypeNotSupport: "CONTENT_TYPE_NOT_SUPPORTED",
	CodeInvalidAgentResponse:  "INVALID_AGENT_RESPONSE",
	CodeExtendedCardNotConfig: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
	CodeExtensionRequired:     "EXTENSION_SUPPORT_REQUIRED",
	CodeVersionNotSupported:   "VERSION_NOT_SUPPORTED",
}

// Error is an error with a JSON-RPC code, safe to show to a client.
type Error struct {
	Code    int
	Message string
	// field, for a -32602 made from a *FieldError, goes in error.data.
	field *FieldError
	// quota, for a CodeLimited made from a *QuotaError, goes in error.data.
	quota *QuotaError
}

func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrTaskNotFound is the error for a task id relay does not know.
func ErrTaskNotFound(id string) *Error { return Errorf(CodeTaskNotFound, "task not found: %s", id) }

// InvalidParams is the error for params that do not fit the method.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, "invalid params: "+format, args...)
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
// *FieldError as -32602 naming the field, a *LimitError as CodeLimited, and
// a generic internal error otherwise: internal details never reach a client.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return &Error{Code: CodeInvalidParams, Message: "invalid params: " + fe.Error(), field: fe}, true
	}
	var le *LimitError
	if errors.As(err, &le) {
		return &Error{Code: CodeLimited, Message: le.Message}, true
	}
	var qe *QuotaError
	if errors.As(err, &qe) {
		return &Error{Code: CodeLimited, Message: qe.Error(), quota: qe}, true
	}
	return &Error{Code: CodeInternal, Message: "internal error"}, false
}

// wireError is a JSON-RPC error object on the wire.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// errorInfo is google.rpc.ErrorInfo as v1.0 puts it in error.data.
type errorInfo struct {
	Type   string `json:"@type"`
	Reason string `json:"reason"`
	Domain string `json:"domain"`
}

// fieldData is error.data of a refused field in v0.1 and v0.3: the field
// and, when its length is the problem, the limit in bytes.
type fieldData struct {
	Field string `json:"field"`
	Limit int    `json:"limit,omitempty"`
}

// quotaData is error.data of a refusal by a storage budget in v0.1 and
// v0.3: which budget, its size and what the client holds.
type quotaData struct {
	Limit string `json:"limit"`
	Max   int64  `json:"max"`
	Used  int64  `json:"used"`
}

// quotaInfo is google.rpc.ErrorInfo with metadata, as v1.0 names a refusal
// by a storage budget in error.data (reason QUOTA_EXCEEDED, domain relay;
// metadata: limit, max, used).
type quotaInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata"`
}

// quotaFailure is google.rpc.QuotaFailure, beside it.
type quotaFailure struct {
	Type       string           `json:"@type"`
	Violations []quotaViolation `json:"violations"`
}

type quotaViolation struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// badRequest is google.rpc.BadRequest as v1.0 puts it in error.data.
type badRequest struct {
	Type            string           `json:"@type"`
	FieldViolations []fieldViolation `json:"fieldViolations"`
}

type fieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// toWire shapes e for dialect d: v1.0 adds an ErrorInfo to A2A errors; a
// refused field is named in data (v1.0: a google.rpc.BadRequest).
func (e *Error) toWire(d Dialect) wireError {
	w := wireError{Code: e.Code, Message: e.Message}
	if r, ok := reasons[e.Code]; ok && d == V10 {
		w.Data = []errorInfo{{Type: "type.googleapis.com/google.rpc.ErrorInfo", Reason: r, Domain: "a2a-protocol.org"}}
	}
	if f := e.field; f != nil {
		w.Data = fieldData{Field: f.Field, Limit: f.Limit}
		if d == V10 {
			w.Data = []badRequest{{Type: "type.googleapis.com/google.rpc.BadRequest",
				FieldViolations: []fieldViolation{{Field: f.Field, Description: f.Error()}}}}
		}
	}
	if q := e.quota; q != nil {
		w.Data = quotaData{Limit: q.Limit, Max: q.Max, Used: q.Used}
		if d == V10 {
			w.Data = []any{
				quotaInfo{Type: "type.googleapis.com/google.rpc.ErrorInfo", Reason: "QUOTA_EXCEEDED", Domain: "relay",
					Metadata: map[string]string{"limit": q.Limit, "max": strconv.FormatInt(q.Max, 10), "used": strconv.FormatInt(q.Used, 10)}},
				quotaFailure{Type: "type.googleapis.com/google.rpc.QuotaFailure",
					Violations: []quotaViolation{{Subject: "client:" + q.Limit, Description: q.Error()}}},
			}
		}
	}
	return w
}
