package a2a

import (
	"errors"
	"fmt"
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
	// is reached: a rate, or open streams. The HTTP status says whose
	// (429 the client's, 503 the instance's), Retry-After when to retry.
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
	return w
}
