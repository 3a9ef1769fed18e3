package jsonrpc

import "github.com/a2arelay/relay/internal/a2a"

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

// codes maps every kind of the core to its JSON-RPC code (read-only). A
// kind missing here answers -32603; a test walks a2a.Kinds through it.
var codes = map[a2a.Kind]int{
	a2a.KindInternal:                  CodeInternal,
	a2a.KindInvalidParams:             CodeInvalidParams,
	a2a.KindTaskNotFound:              CodeTaskNotFound,
	a2a.KindTaskNotCancelable:         CodeTaskNotCancelable,
	a2a.KindPushNotSupported:          CodePushNotSupported,
	a2a.KindUnsupportedOperation:      CodeUnsupportedOperation,
	a2a.KindContentTypeNotSupported:   CodeContentTypeNotSupport,
	a2a.KindInvalidAgentResponse:      CodeInvalidAgentResponse,
	a2a.KindExtendedCardNotConfigured: CodeExtendedCardNotConfig,
	a2a.KindExtensionRequired:         CodeExtensionRequired,
	a2a.KindVersionNotSupported:       CodeVersionNotSupported,
	a2a.KindLimited:                   CodeLimited,
	a2a.KindUnauthenticated:           CodeUnauthenticated,
}

// Code is the JSON-RPC code of kind k.
func Code(k a2a.Kind) int {
	if c, ok := codes[k]; ok {
		return c
	}
	return CodeInternal
}

// KindOf is the kind of the core a JSON-RPC code says (an agent's answer
// read by relay's client side); false for the codes of the envelope
// (parse error, invalid request, method not found) and unknown ones.
func KindOf(code int) (a2a.Kind, bool) {
	for k, c := range codes {
		if c == code {
			return k, true
		}
	}
	return a2a.KindInternal, false
}

// wireError is a JSON-RPC error object on the wire.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
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

// toWire shapes e for dialect d: its code; in v1.0 its google.rpc details
// in data (always an ErrorInfo naming the reason, then a BadRequest for a
// refused field, or a QuotaFailure for a storage budget); in v0.1 and v0.3
// a refused field or budget named in data.
func toWire(e *a2a.Error, d a2a.Dialect) wireError {
	w := wireError{Code: Code(e.Kind), Message: e.Message}
	if d == a2a.V10 {
		w.Data = e.Details()
		return w
	}
	if f := e.Field; f != nil {
		w.Data = fieldData{Field: f.Field, Limit: f.Limit}
	}
	if q := e.Quota; q != nil {
		w.Data = quotaData{Limit: q.Limit, Max: q.Max, Used: q.Used}
	}
	return w
}
