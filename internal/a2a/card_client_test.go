package a2a

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Hand-written cards as v0.3 and v1.0 agents publish them.
const (
	cardV03 = `{"name":"Currency Agent","description":"converts","version":"1.0.0","protocolVersion":"0.3.0",
		"url":"https://currency.example.com/a2a","preferredTransport":"JSONRPC",
		"additionalInterfaces":[{"url":"https://currency.example.com/a2a","transport":"JSONRPC"},
			{"url":"https://currency.example.com/grpc","transport":"GRPC"}],
		"capabilities":{"streaming":true,"pushNotifications":false},
		"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"skills":[{"id":"convert","name":"Convert","description":"converts","tags":["fx"]}]}`
	cardV10 = `{"name":"Travel Agent","description":"books","version":"2.0.0",
		"supportedInterfaces":[{"url":"https://travel.example.com/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"},
			{"url":"https://travel.example.com/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"acme"},
			{"url":"https://travel.example.com/old","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
		"capabilities":{"streaming":false,"pushNotifications":true},
		"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
)

func TestParseCard(t *testing.T) {
	t.Parallel()
	own, err := NewCard(CardConfig{Name: "relay", Description: "d", Version: "1", URL: "https://relay.example.com/a2a", Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	ownCard, err := own.Public()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, raw string
		want      RemoteCard
	}{
		{"own card: v1.0 preferred", string(ownCard), RemoteCard{V10, "https://relay.example.com/a2a", true, "relay"}},
		{"v0.3", cardV03, RemoteCard{V03, "https://currency.example.com/a2a", true, "Currency Agent"}},
		{"v1.0", cardV10, RemoteCard{V10, "https://travel.example.com/rpc", false, "Travel Agent"}},
		{"v0.3 over gRPC with a JSON-RPC additional interface",
			`{"name":"g","protocolVersion":"0.3.0","url":"https://g.example.com/grpc","preferredTransport":"GRPC",
			"additionalInterfaces":[{"url":"https://g.example.com/rest","transport":"HTTP+JSON"},{"url":"http://g.example.com:8080/rpc","transport":"JSONRPC"}]}`,
			RemoteCard{V03, "http://g.example.com:8080/rpc", false, "g"}},
		{"v0.3 without preferredTransport", `{"protocolVersion":"0.3","url":"https://a.example.com"}`,
			RemoteCard{Dialect: V03, URL: "https://a.example.com"}},
		{"interface without protocolVersion is 0.3",
			`{"supportedInterfaces":[{"url":"https://b.example.com/rpc","protocolBinding":"jsonrpc"}],"capabilities":{"streaming":true}}`,
			RemoteCard{V03, "https://b.example.com/rpc", true, ""}},
		{"v1.0.1", `{"supportedInterfaces":[{"url":"https://c.example.com","protocolBinding":"JSONRPC","protocolVersion":"1.0.1"}]}`,
			RemoteCard{Dialect: V10, URL: "https://c.example.com"}},
	} {
		got, err := ParseCard([]byte(tc.raw))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseCardErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, msg string
		noRPC    bool
	}{
		{`{"name":"g","supportedInterfaces":[{"url":"https://g.example.com","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`,
			`no JSON-RPC interface in A2A 1.0 or 0.3 (protocolVersion (none), supportedInterfaces: "GRPC" "1.0")`, true},
		{`{"protocolVersion":"0.3.0","url":"https://g.example.com","preferredTransport":"GRPC"}`,
			`(protocolVersion "0.3.0", preferredTransport GRPC, no supportedInterfaces)`, true},
		{`{"protocolVersion":"0.2.5","url":"https://old.example.com"}`, `protocolVersion "0.2.5"`, true},
		{`{"url":"https://v01.example.com","name":"v0.1 agent"}`, "protocolVersion (none)", true},
		{`{"supportedInterfaces":[{"url":"https://n.example.com","protocolBinding":"JSONRPC","protocolVersion":"2.0"}]}`, `"JSONRPC" "2.0"`, true},
		{`null`, "no supportedInterfaces", true},
		{`{"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, "agent card: supportedInterfaces[0].url is empty", false},
		{`{"protocolVersion":"0.3.0","url":"/a2a"}`, `agent card: url "/a2a" is not an absolute http(s) URL`, false},
		{`{"protocolVersion":"0.3.0","url":"ftp://x.example.com/a2a"}`, "is not an absolute http(s) URL", false},
		{`{"protocolVersion":"0.3.0","url":"https://x.example.com","capabilities":{"streaming":"yes"}}`,
			"agent card: capabilities.streaming: unexpected JSON string", false},
		{`{"supportedInterfaces":{}}`, "agent card: supportedInterfaces: unexpected JSON object", false},
		{`[1]`, "agent card: expected an object, got a JSON array", false},
		{`{"name":`, "agent card: malformed JSON", false},
		{``, "agent card: malformed JSON", false},
	} {
		_, err := ParseCard([]byte(tc.raw))
		if err == nil {
			t.Errorf("ParseCard(%s) succeeded, want %q", tc.raw, tc.msg)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseCard(%s) = %q, want it to contain %q", tc.raw, err, tc.msg)
		}
		if errors.Is(err, ErrNoJSONRPC) != tc.noRPC {
			t.Errorf("ParseCard(%s): errors.Is(ErrNoJSONRPC) = %v, want %v", tc.raw, !tc.noRPC, tc.noRPC)
		}
	}
}

func TestClientEncodeSendParams(t *testing.T) {
	t.Parallel()
	msg := Message{MessageID: "m-1", TaskID: "t-1", ContextID: "c-1", Metadata: json.RawMessage(`{"k":"v"}`),
		Parts: []Part{{Kind: PartText, Text: "hello"}, {Kind: PartText, Text: "world"}}}
	for _, tc := range []struct {
		d        Dialect
		blocking bool
		want     string
	}{
		{V10, true, `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"},{"text":"world"}],
			"contextId":"c-1","taskId":"t-1","metadata":{"k":"v"}},"configuration":{"returnImmediately":false}}`},
		{V10, false, `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"},{"text":"world"}],
			"contextId":"c-1","taskId":"t-1","metadata":{"k":"v"}},"configuration":{"returnImmediately":true}}`},
		{V03, true, `{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hello"},
			{"kind":"text","text":"world"}],"contextId":"c-1","taskId":"t-1","metadata":{"k":"v"}},"configuration":{"blocking":true}}`},
		{V03, false, `{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hello"},
			{"kind":"text","text":"world"}],"contextId":"c-1","taskId":"t-1","metadata":{"k":"v"}},"configuration":{"blocking":false}}`},
	} {
		raw, err := EncodeSendParams(tc.d, msg, tc.blocking)
		if err != nil {
			t.Fatalf("%s: %v", tc.d, err)
		}
		jsonEq(t, raw, tc.want)
		// The server side decodes what the client side encodes.
		p, _, err := codecFor(tc.d).decodeSend(raw)
		if err != nil {
			t.Fatalf("%s: server decode of %s: %v", tc.d, raw, err)
		}
		want := msg
		want.Role = RoleUser
		jsonEq(t, p.Message, want)
		if p.Blocking != tc.blocking || p.TaskID != "t-1" || p.ContextID != "c-1" || p.Dialect != tc.d {
			t.Errorf("%s: decoded %+v", tc.d, p)
		}
	}
	// Every part kind survives the trip, in both dialects.
	rich := Message{MessageID: "m-2", Role: RoleUser, Parts: sampleTask().Artifacts[0].Parts}
	for _, d := range []Dialect{V10, V03} {
		raw, err := EncodeSendParams(d, rich, true)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := codecFor(d).decodeSend(raw)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		jsonEq(t, p.Message, rich)
	}
}

func TestClientEncodeSendParamsErrors(t *testing.T) {
	t.Parallel()
	ok := Message{MessageID: "m", Parts: []Part{{Kind: PartText, Text: "x"}}}
	for _, tc := range []struct {
		d   Dialect
		m   func(Message) Message
		msg string
	}{
		{V10, func(m Message) Message { m.MessageID = ""; return m }, "message.messageId is required"},
		{V03, func(m Message) Message { m.Role = "system"; return m }, `message.role: "system" is not a known role`},
		{V10, func(m Message) Message { m.Parts = nil; return m }, "message.parts: at least one part is required"},
		{V03, func(m Message) Message { m.Parts = append(m.Parts, Part{Kind: PartFile}); return m },
			"message.parts[1]: a file part needs file.bytes or file.uri"},
		{V10, func(m Message) Message { m.Parts = []Part{{Kind: "image"}}; return m }, `message.parts[0]: unknown part kind "image"`},
	} {
		_, err := EncodeSendParams(tc.d, tc.m(ok), true)
		wantInvalidParams(t, err, tc.msg)
	}
	if _, err := EncodeSendParams(V01, ok, true); err == nil || !strings.Contains(err.Error(), `dialect "0.1" is not supported`) {
		t.Errorf("EncodeSendParams(V01) error = %v", err)
	}
}

func TestClientEncodeTaskIDParams(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{V10, V03} {
		raw := EncodeTaskIDParams(d, `t-"1"`)
		jsonEq(t, raw, `{"id":"t-\"1\""}`)
		id, hl, err := codecFor(d).decodeTaskQuery(raw)
		if err != nil || id != `t-"1"` || hl != nil {
			t.Errorf("%s: server decode of %s = %q, %v, %v", d, raw, id, hl, err)
		}
	}
}
