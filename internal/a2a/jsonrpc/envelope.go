package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/a2arelay/relay/internal/a2a"
)

// request is a decoded JSON-RPC request envelope. ID keeps the raw bytes of
// the request's id so the response echoes it in type and value.
type request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	// Notification: the request has no id member (JSON-RPC 2.0 §4.1), so
	// gets no reply. An id of null is not one: it is a request, answered
	// under that null id.
	Notification bool
}

// response is a JSON-RPC response envelope.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

var nullID = json.RawMessage("null")

// parseRequest decodes a JSON-RPC 2.0 request. On failure it returns the
// error to answer with and the id to answer it under (null when unknown).
func parseRequest(body []byte) (request, json.RawMessage, *wireError) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return request{}, nullID, failure(CodeParseError, "parse error: the body is empty")
	}
	if body[0] == '[' {
		return request{}, nullID, failure(CodeInvalidRequest, "batch requests are not supported")
	}
	var env struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if !json.Valid(body) {
		return request{}, nullID, failure(CodeParseError, "parse error: the body is not valid JSON")
	}
	if !a2a.TextValid(body) {
		// Decoding would replace each bad sequence with U+FFFD, silently
		// changing what the client sent.
		return request{}, nullID, failure(CodeParseError, "parse error: the body is not valid UTF-8 (or escapes a lone UTF-16 surrogate)")
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return request{}, nullID, failure(CodeInvalidRequest, "the request must be a JSON object")
	}
	id := env.ID
	if !validID(id) {
		return request{}, nullID, failure(CodeInvalidRequest, "id must be a string, a number or null")
	}
	notification := len(id) == 0
	if notification {
		// An envelope that is not a valid request is answered under a null
		// id, notification or not (JSON-RPC 2.0 §5: the id could not be
		// told).
		id = nullID
	}
	var version string
	if err := json.Unmarshal(env.JSONRPC, &version); err != nil || version != "2.0" {
		return request{}, id, failure(CodeInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	var method string
	if err := json.Unmarshal(env.Method, &method); err != nil || method == "" {
		return request{}, id, failure(CodeInvalidRequest, "method must be a non-empty string")
	}
	req := request{ID: env.ID, Method: method, Params: env.Params, Notification: notification}
	if p := bytes.TrimSpace(env.Params); len(p) > 0 && p[0] != '{' && string(p) != "null" {
		// A valid envelope: a notification's invalid params get no reply.
		return req, id, failure(CodeInvalidParams, "invalid params: params must be an object")
	}
	return req, id, nil
}

// validID reports whether raw is absent, null, a string or a number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	case string(raw) == "null":
		return true
	}
	return false
}

// route is where a method goes. shared marks the methods v0.1 and v0.3
// share; their replies follow the dialect the task was created in.
type route struct {
	dialect a2a.Dialect
	op      a2a.Op
	shared  bool
}

// routes maps every method name of every dialect (read-only).
var routes = map[string]route{
	"tasks/send":                 {a2a.V01, a2a.OpSend, false},
	"tasks/sendSubscribe":        {a2a.V01, a2a.OpStream, false},
	"tasks/pushNotification/set": {a2a.V01, a2a.OpPushSet, false},
	"tasks/pushNotification/get": {a2a.V01, a2a.OpPushGet, false},

	"tasks/get":                           {a2a.V03, a2a.OpGet, true},
	"tasks/cancel":                        {a2a.V03, a2a.OpCancel, true},
	"tasks/resubscribe":                   {a2a.V03, a2a.OpSubscribe, true},
	"message/send":                        {a2a.V03, a2a.OpSend, false},
	"message/stream":                      {a2a.V03, a2a.OpStream, false},
	"tasks/pushNotificationConfig/set":    {a2a.V03, a2a.OpPushSet, false},
	"tasks/pushNotificationConfig/get":    {a2a.V03, a2a.OpPushGet, false},
	"tasks/pushNotificationConfig/list":   {a2a.V03, a2a.OpPushList, false},
	"tasks/pushNotificationConfig/delete": {a2a.V03, a2a.OpPushDelete, false},
	"agent/getAuthenticatedExtendedCard":  {a2a.V03, a2a.OpExtendedCard, false},

	"SendMessage":                      {a2a.V10, a2a.OpSend, false},
	"SendStreamingMessage":             {a2a.V10, a2a.OpStream, false},
	"GetTask":                          {a2a.V10, a2a.OpGet, false},
	"ListTasks":                        {a2a.V10, a2a.OpList, false},
	"CancelTask":                       {a2a.V10, a2a.OpCancel, false},
	"SubscribeToTask":                  {a2a.V10, a2a.OpSubscribe, false},
	"CreateTaskPushNotificationConfig": {a2a.V10, a2a.OpPushSet, false},
	"GetTaskPushNotificationConfig":    {a2a.V10, a2a.OpPushGet, false},
	"ListTaskPushNotificationConfigs":  {a2a.V10, a2a.OpPushList, false},
	"DeleteTaskPushNotificationConfig": {a2a.V10, a2a.OpPushDelete, false},
	"GetExtendedAgentCard":             {a2a.V10, a2a.OpExtendedCard, false},
}

// failure is an error of the envelope itself, which has no data.
func failure(code int, msg string) *wireError { return &wireError{Code: code, Message: msg} }
