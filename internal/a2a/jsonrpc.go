package a2a

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
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
func parseRequest(body []byte) (request, json.RawMessage, *Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return request{}, nullID, Errorf(CodeParseError, "parse error: the body is empty")
	}
	if body[0] == '[' {
		return request{}, nullID, Errorf(CodeInvalidRequest, "batch requests are not supported")
	}
	var env struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if !json.Valid(body) {
		return request{}, nullID, Errorf(CodeParseError, "parse error: the body is not valid JSON")
	}
	if !TextValid(body) {
		// Decoding would replace each bad sequence with U+FFFD, silently
		// changing what the client sent.
		return request{}, nullID, Errorf(CodeParseError, "parse error: the body is not valid UTF-8 (or escapes a lone UTF-16 surrogate)")
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return request{}, nullID, Errorf(CodeInvalidRequest, "the request must be a JSON object")
	}
	id := env.ID
	if !validID(id) {
		return request{}, nullID, Errorf(CodeInvalidRequest, "id must be a string, a number or null")
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
		return request{}, id, Errorf(CodeInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	var method string
	if err := json.Unmarshal(env.Method, &method); err != nil || method == "" {
		return request{}, id, Errorf(CodeInvalidRequest, "method must be a non-empty string")
	}
	req := request{ID: env.ID, Method: method, Params: env.Params, Notification: notification}
	if p := bytes.TrimSpace(env.Params); len(p) > 0 && p[0] != '{' && string(p) != "null" {
		// A valid envelope: a notification's invalid params get no reply.
		return req, id, Errorf(CodeInvalidParams, "invalid params: params must be an object")
	}
	return req, id, nil
}

// TextValid reports whether a JSON body is UTF-8 and escapes no lone
// UTF-16 surrogate in its strings: what decoding would otherwise replace,
// silently, with U+FFFD. Endpoints refuse such bodies instead.
func TextValid(body []byte) bool { return utf8.Valid(body) && surrogatesPaired(body) }

// surrogatesPaired reports whether every \uXXXX escape of a UTF-16
// surrogate in the strings of body is a high one followed by a low one: a
// lone surrogate names no character. body need not be valid JSON.
func surrogatesPaired(body []byte) bool {
	inString := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			inString = !inString
		case c != '\\' || !inString:
		case i+1 < len(body) && body[i+1] == 'u':
			r := hex4(body[i+2:])
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if i+6 > len(body) || !bytes.HasPrefix(body[i+6:], []byte(`\u`)) {
					return false
				}
				if lo := hex4(body[i+8:]); lo < 0xDC00 || lo >= 0xE000 {
					return false
				}
				i += 11
			case r >= 0xDC00 && r < 0xE000:
				return false
			default:
				i += 5
			}
		default:
			i++ // every other escape is one byte more: skip it
		}
	}
	return true
}

// hex4 decodes the four hex digits b starts with (valid JSON guarantees
// them after \u), or returns -1.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
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

// parseVersion maps an A2A-Version header to a dialect ("" when absent).
func parseVersion(h string) (Dialect, bool) {
	h = strings.TrimSpace(h)
	switch h {
	case "":
		return "", true
	case "0.1", "0.1.0", "0.2", "0.2.0", "0.2.5":
		return V01, true
	case "0.3", "0.3.0":
		return V03, true
	case "1", "1.0", "1.0.0", "1.0.1":
		return V10, true
	}
	return "", false
}

// op is an operation of the A2A endpoint.
type op int

const (
	opSend op = iota
	opStream
	opGet
	opList
	opCancel
	opResubscribe
	opPushSet
	opPushGet
	opPushList
	opPushDelete
	opExtendedCard
)

// route is where a method goes. shared marks the methods v0.1 and v0.3
// share; their replies follow the dialect the task was created in.
type route struct {
	dialect Dialect
	op      op
	shared  bool
}

// routes maps every method name of every dialect (read-only).
var routes = map[string]route{
	"tasks/send":                 {V01, opSend, false},
	"tasks/sendSubscribe":        {V01, opStream, false},
	"tasks/pushNotification/set": {V01, opPushSet, false},
	"tasks/pushNotification/get": {V01, opPushGet, false},

	"tasks/get":                           {V03, opGet, true},
	"tasks/cancel":                        {V03, opCancel, true},
	"tasks/resubscribe":                   {V03, opResubscribe, true},
	"message/send":                        {V03, opSend, false},
	"message/stream":                      {V03, opStream, false},
	"tasks/pushNotificationConfig/set":    {V03, opPushSet, false},
	"tasks/pushNotificationConfig/get":    {V03, opPushGet, false},
	"tasks/pushNotificationConfig/list":   {V03, opPushList, false},
	"tasks/pushNotificationConfig/delete": {V03, opPushDelete, false},
	"agent/getAuthenticatedExtendedCard":  {V03, opExtendedCard, false},

	"SendMessage":                      {V10, opSend, false},
	"SendStreamingMessage":             {V10, opStream, false},
	"GetTask":                          {V10, opGet, false},
	"ListTasks":                        {V10, opList, false},
	"CancelTask":                       {V10, opCancel, false},
	"SubscribeToTask":                  {V10, opResubscribe, false},
	"CreateTaskPushNotificationConfig": {V10, opPushSet, false},
	"GetTaskPushNotificationConfig":    {V10, opPushGet, false},
	"ListTaskPushNotificationConfigs":  {V10, opPushList, false},
	"DeleteTaskPushNotificationConfig": {V10, opPushDelete, false},
	"GetExtendedAgentCard":             {V10, opExtendedCard, false},
}
