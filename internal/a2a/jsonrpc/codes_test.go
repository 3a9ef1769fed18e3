package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// Every kind of the core has its JSON-RPC code, and, in v1.0, the
// google.rpc.ErrorInfo reason A2A gives it (none for the kinds A2A does
// not name). A kind added to a2a.Kinds without a row here, or without a
// code in codes, fails.
func TestEveryKindHasAJSONRPCCode(t *testing.T) {
	t.Parallel()
	want := map[a2a.Kind]struct {
		code   int
		reason string
	}{
		a2a.KindInternal:                  {-32603, "INTERNAL_ERROR"},
		a2a.KindInvalidParams:             {-32602, "INVALID_PARAMS"},
		a2a.KindTaskNotFound:              {-32001, "TASK_NOT_FOUND"},
		a2a.KindTaskNotCancelable:         {-32002, "TASK_NOT_CANCELABLE"},
		a2a.KindPushNotSupported:          {-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		a2a.KindUnsupportedOperation:      {-32004, "UNSUPPORTED_OPERATION"},
		a2a.KindContentTypeNotSupported:   {-32005, "CONTENT_TYPE_NOT_SUPPORTED"},
		a2a.KindInvalidAgentResponse:      {-32006, "INVALID_AGENT_RESPONSE"},
		a2a.KindExtendedCardNotConfigured: {-32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		a2a.KindExtensionRequired:         {-32008, "EXTENSION_SUPPORT_REQUIRED"},
		a2a.KindVersionNotSupported:       {-32009, "VERSION_NOT_SUPPORTED"},
		a2a.KindLimited:                   {-32029, "LIMIT_REACHED"},
		a2a.KindUnauthenticated:           {-32040, "UNAUTHENTICATED"},
	}
	seen := map[int]a2a.Kind{}
	for _, k := range a2a.Kinds() {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %q (%d) has no row in this table", k, int(k))
			continue
		}
		code, mapped := codes[k]
		if !mapped || code != w.code {
			t.Errorf("kind %q: code %d (mapped %v), want %d", k, code, mapped, w.code)
		}
		if other, dup := seen[code]; dup {
			t.Errorf("kinds %q and %q share code %d", k, other, code)
		}
		seen[code] = k
		if back, ok := KindOf(code); !ok || back != k {
			t.Errorf("KindOf(%d) = %q, %v; want %q", code, back, ok, k)
		}
		for _, d := range []a2a.Dialect{a2a.V01, a2a.V03, a2a.V10} {
			got := toWire(a2a.Errorf(k, "x"), d)
			wantData := "null"
			if d == a2a.V10 {
				wantData = `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + w.reason + `","domain":"` + k.Domain() + `"}]`
			}
			if data, _ := json.Marshal(got.Data); got.Code != w.code || got.Message != "x" || string(data) != wantData {
				t.Errorf("kind %q in %s: %d %q data %s; want %d, data %s", k, d, got.Code, got.Message, data, w.code, wantData)
			}
		}
	}
	if len(codes) != len(a2a.Kinds()) {
		t.Errorf("codes maps %d kinds, a2a.Kinds has %d", len(codes), len(a2a.Kinds()))
	}
	for _, code := range []int{CodeParseError, CodeInvalidRequest, CodeMethodNotFound, -1} {
		if k, ok := KindOf(code); ok {
			t.Errorf("KindOf(%d) = %q: the envelope's codes are no kind of the core", code, k)
		}
	}
}

func TestErrorToWire(t *testing.T) {
	t.Parallel()
	infoOne := func(reason, domain string) string {
		return `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + reason + `","domain":"` + domain + `"}`
	}
	info := func(reason string) string { return "[" + infoOne(reason, "a2a-protocol.org") + "]" }
	field, _ := a2a.AsError(&a2a.FieldError{Field: "message.messageId", Limit: 256, Problem: "is longer than 256 bytes"})
	quota, _ := a2a.AsError(&a2a.QuotaError{Limit: a2a.QuotaTasks, Max: 2, Used: 2})
	limit, _ := a2a.AsError(&a2a.LimitError{Scope: a2a.LimitClient, Message: "too many open streams", RetryAfter: time.Second})
	quotaMsg := "storage budget tasks reached: 2 used of 2; finished tasks free their share when they expire"
	for _, tc := range []struct {
		name string
		err  *a2a.Error
		d    a2a.Dialect
		want string
	}{
		{"v1.0 task not found", a2a.ErrTaskNotFound("t1"), a2a.V10,
			`{"code":-32001,"message":"task not found: t1","data":` + info("TASK_NOT_FOUND") + `}`},
		{"v1.0 version", a2a.Errorf(a2a.KindVersionNotSupported, "no"), a2a.V10,
			`{"code":-32009,"message":"no","data":` + info("VERSION_NOT_SUPPORTED") + `}`},
		{"v1.0 extended card", a2a.Errorf(a2a.KindExtendedCardNotConfigured, "no"), a2a.V10,
			`{"code":-32007,"message":"no","data":` + info("EXTENDED_AGENT_CARD_NOT_CONFIGURED") + `}`},
		{"v0.3 task not found", a2a.ErrTaskNotFound("t1"), a2a.V03, `{"code":-32001,"message":"task not found: t1"}`},
		{"v0.1 task not found", a2a.ErrTaskNotFound("t1"), a2a.V01, `{"code":-32001,"message":"task not found: t1"}`},
		{"v1.0 invalid params", a2a.InvalidParams("bad"), a2a.V10, `{"code":-32602,"message":"invalid params: bad","data":` + info("INVALID_PARAMS") + `}`},
		{"v0.3 invalid params", a2a.InvalidParams("bad"), a2a.V03, `{"code":-32602,"message":"invalid params: bad"}`},
		{"v1.0 internal", &a2a.Error{Kind: a2a.KindInternal, Message: "internal error"}, a2a.V10, `{"code":-32603,"message":"internal error","data":` + info("INTERNAL_ERROR") + `}`},
		{"v0.3 field", field, a2a.V03,
			`{"code":-32602,"message":"invalid params: message.messageId is longer than 256 bytes","data":{"field":"message.messageId","limit":256}}`},
		{"v1.0 field", field, a2a.V10,
			`{"code":-32602,"message":"invalid params: message.messageId is longer than 256 bytes","data":[` + infoOne("INVALID_PARAMS", "a2a-protocol.org") + `,{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.messageId","description":"message.messageId is longer than 256 bytes"}]}]}`},
		{"v0.3 quota", quota, a2a.V03,
			`{"code":-32029,"message":"` + quotaMsg + `","data":{"limit":"tasks","max":2,"used":2}}`},
		{"v1.0 quota", quota, a2a.V10,
			`{"code":-32029,"message":"` + quotaMsg + `","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"QUOTA_EXCEEDED","domain":"relay","metadata":{"limit":"tasks","max":"2","used":"2"}},` +
				`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"client:tasks","description":"` + quotaMsg + `"}]}]}`},
		{"v1.0 limit", limit, a2a.V10, `{"code":-32029,"message":"too many open streams","data":[` + infoOne("LIMIT_REACHED", "relay") + `]}`},
		{"v0.3 limit", limit, a2a.V03, `{"code":-32029,"message":"too many open streams"}`},
	} {
		got, _ := json.Marshal(toWire(tc.err, tc.d))
		if !sameJSON(got, []byte(tc.want)) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if e, ok := a2a.AsError(errors.New("dial tcp 10.0.0.1:6379: refused")); ok || e.Kind != a2a.KindInternal || e.Message != "internal error" {
		t.Errorf("AsError(plain) = %+v, %v", e, ok)
	}
}
