package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// What a client needs to find an agent and call it: its card, parsed to the
// one endpoint and dialect to use, and the method names and params of the
// requests it sends there.

// RemoteCard is what relay needs from another agent's card to call it.
type RemoteCard struct {
	// Dialect is the dialect to speak: V10 when the card offers v1.0 over
	// JSON-RPC, else V03.
	Dialect Dialect
	// URL is the JSON-RPC endpoint of that dialect.
	URL string
	// Streaming reports capabilities.streaming.
	Streaming bool
	// Name is the agent's name.
	Name string
}

// ErrNoJSONRPC is wrapped by the error ParseCard returns for a card that
// offers no JSON-RPC interface in a dialect the client speaks.
var ErrNoJSONRPC = errors.New("agent card offers no JSON-RPC interface in A2A 1.0 or 0.3")

// cardWire is the part of an agent card (v0.3 and v1.0 fields alike) that
// ParseCard reads.
type cardWire struct {
	Name                string `json:"name"`
	URL                 string `json:"url"`
	ProtocolVersion     string `json:"protocolVersion"`
	PreferredTransport  string `json:"preferredTransport"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`
	Capabilities struct {
		Streaming bool `json:"streaming"`
	} `json:"capabilities"`
}

// ParseCard reads an agent card and picks the endpoint to call: the first
// supportedInterfaces entry with protocolBinding "JSONRPC" and
// protocolVersion 1.0 when there is one (v1.0 is preferred when a card
// offers both, as relay's own card does); else the v0.3 endpoint: the
// top-level url of a card with protocolVersion 0.3.x whose
// preferredTransport is JSONRPC (the v0.3 default when absent), a JSONRPC
// entry of its additionalInterfaces, or a JSONRPC supportedInterfaces
// entry for 0.3 (an entry without protocolVersion counts as 0.3). The URL
// must be an absolute http or https URL.
func ParseCard(raw []byte) (RemoteCard, error) {
	var w cardWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return RemoteCard{}, fmt.Errorf("agent card: %s", describeJSONError(err))
	}
	rc := RemoteCard{Name: w.Name, Streaming: w.Capabilities.Streaming}
	var where string
	rc.Dialect, rc.URL, where = pickInterface(&w)
	if rc.Dialect == "" {
		return RemoteCard{}, fmt.Errorf("%w (%s)", ErrNoJSONRPC, describeOffers(&w))
	}
	if rc.URL == "" {
		return RemoteCard{}, fmt.Errorf("agent card: %s is empty", where)
	}
	if u, err := url.Parse(rc.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return RemoteCard{}, fmt.Errorf("agent card: %s %q is not an absolute http(s) URL", where, rc.URL)
	}
	return rc, nil
}

// pickInterface returns the dialect and URL to use, and the card field the
// URL came from (for errors); an empty dialect when there is none.
func pickInterface(w *cardWire) (Dialect, string, string) {
	for i, in := range w.SupportedInterfaces {
		if isJSONRPC(in.ProtocolBinding) && versionDialect(in.ProtocolVersion) == V10 {
			return V10, in.URL, fmt.Sprintf("supportedInterfaces[%d].url", i)
		}
	}
	if versionDialect(w.ProtocolVersion) == V03 {
		if w.PreferredTransport == "" || isJSONRPC(w.PreferredTransport) {
			return V03, w.URL, "url"
		}
		for i, in := range w.AdditionalInterfaces {
			if isJSONRPC(in.Transport) {
				return V03, in.URL, fmt.Sprintf("additionalInterfaces[%d].url", i)
			}
		}
	}
	for i, in := range w.SupportedInterfaces {
		if isJSONRPC(in.ProtocolBinding) && (in.ProtocolVersion == "" || versionDialect(in.ProtocolVersion) == V03) {
			return V03, in.URL, fmt.Sprintf("supportedInterfaces[%d].url", i)
		}
	}
	return "", "", ""
}

// describeOffers says what a card offers instead, for ErrNoJSONRPC.
func describeOffers(w *cardWire) string {
	var offers []string
	for _, in := range w.SupportedInterfaces {
		offers = append(offers, fmt.Sprintf("%s %s", quotedOrNone(in.ProtocolBinding), quotedOrNone(in.ProtocolVersion)))
	}
	top := fmt.Sprintf("protocolVersion %s", quotedOrNone(w.ProtocolVersion))
	if w.PreferredTransport != "" {
		top += ", preferredTransport " + w.PreferredTransport
	}
	if len(offers) == 0 {
		return top + ", no supportedInterfaces"
	}
	return top + ", supportedInterfaces: " + strings.Join(offers, "; ")
}

func quotedOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

// isJSONRPC reports whether a transport or protocol binding names JSON-RPC.
func isJSONRPC(binding string) bool { return strings.EqualFold(strings.TrimSpace(binding), "JSONRPC") }

// versionDialect maps a card's protocol version ("1.0", "1.0.1", "0.3.0")
// to the dialect the client speaks for it ("" for none).
func versionDialect(v string) Dialect {
	v = strings.TrimSpace(v)
	switch {
	case v == "1" || v == "1.0" || strings.HasPrefix(v, "1.0."):
		return V10
	case v == "0.3" || strings.HasPrefix(v, "0.3."):
		return V03
	}
	return ""
}

// Methods are the JSON-RPC method names of the requests a client sends.
type Methods struct {
	// Send sends a message and returns a task or a message.
	Send string
	// Stream sends a message and streams the task's events.
	Stream string
	// Get returns a task.
	Get string
	// Cancel cancels a task.
	Cancel string
	// Subscribe streams the events of an existing task.
	Subscribe string
}

// ClientMethods returns the method names of dialect d (PROTOCOL.md §1);
// the zero Methods for a dialect other than V10 and V03.
func ClientMethods(d Dialect) Methods {
	switch d {
	case V10:
		return Methods{Send: "SendMessage", Stream: "SendStreamingMessage", Get: "GetTask",
			Cancel: "CancelTask", Subscribe: "SubscribeToTask"}
	case V03:
		return Methods{Send: "message/send", Stream: "message/stream", Get: "tasks/get",
			Cancel: "tasks/cancel", Subscribe: "tasks/resubscribe"}
	}
	return Methods{}
}

// EncodeSendParams builds the params of a send or stream request carrying
// msg. v1.0: {message:{messageId, role:"ROLE_USER", parts:[{text}...],
// contextId?, taskId?, ...}, configuration:{returnImmediately: !blocking}};
// v0.3: {message:{kind:"message", messageId, role:"user",
// parts:[{kind:"text", text}...], ...}, configuration:{blocking}}. msg needs
// a messageId (the caller owns it, so a retried send repeats it) and at
// least one valid part; an empty role means RoleUser.
func EncodeSendParams(d Dialect, msg Message, blocking bool) (json.RawMessage, error) {
	if d != V10 && d != V03 {
		return nil, unsupportedDialect(d)
	}
	if msg.MessageID == "" {
		return nil, InvalidParams("message.messageId is required")
	}
	if msg.Role == "" {
		msg.Role = RoleUser
	}
	if msg.Role != RoleUser && msg.Role != RoleAgent {
		return nil, InvalidParams("message.role: %q is not a known role", msg.Role)
	}
	if len(msg.Parts) == 0 {
		return nil, InvalidParams("message.parts: at least one part is required")
	}
	if err := checkParts(msg.Parts, "message"); err != nil {
		return nil, err
	}
	var v any
	if d == V10 {
		type conf struct {
			ReturnImmediately bool `json:"returnImmediately"`
		}
		v = struct {
			Message       *v10Message `json:"message"`
			Configuration conf        `json:"configuration"`
		}{v10Msg(&msg), conf{!blocking}}
	} else {
		type conf struct {
			Blocking bool `json:"blocking"`
		}
		v = struct {
			Message       *v03Message `json:"message"`
			Configuration conf        `json:"configuration"`
		}{v03Msg(&msg), conf{blocking}}
	}
	return json.Marshal(v)
}

// EncodeTaskIDParams builds the params of a get, cancel or subscribe
// request: {"id": taskID} in every dialect (v0.3 TaskIdParams and
// TaskQueryParams, v1.0 GetTaskRequest, CancelTaskRequest and
// SubscribeToTaskRequest all name the task "id").
func EncodeTaskIDParams(_ Dialect, taskID string) json.RawMessage {
	b, _ := json.Marshal(struct {
		ID string `json:"id"`
	}{taskID}) // a struct of one string always marshals
	return b
}
