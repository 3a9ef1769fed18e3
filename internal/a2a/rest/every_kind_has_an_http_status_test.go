package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
)

// Every kind of the core has the HTTP status and google.rpc.Code of spec
// §5.4 (relay's own kinds: 401, 429 or 503), and its ErrorInfo (reason
// and domain) in details. A kind added to a2a.Kinds without a row here, or without a
// status in statuses, fails.
func TestEveryKindHasAnHTTPStatus(t *testing.T) {
	t.Parallel()
	want := map[a2a.Kind]struct {
		code   int
		status string
	}{
		a2a.KindInternal:                  {500, "INTERNAL"},
		a2a.KindInvalidParams:             {400, "INVALID_ARGUMENT"},
		a2a.KindTaskNotFound:              {404, "NOT_FOUND"},
		a2a.KindTaskNotCancelable:         {400, "FAILED_PRECONDITION"},
		a2a.KindPushNotSupported:          {400, "FAILED_PRECONDITION"},
		a2a.KindUnsupportedOperation:      {400, "FAILED_PRECONDITION"},
		a2a.KindContentTypeNotSupported:   {400, "INVALID_ARGUMENT"},
		a2a.KindInvalidAgentResponse:      {500, "INTERNAL"},
		a2a.KindExtendedCardNotConfigured: {400, "FAILED_PRECONDITION"},
		a2a.KindExtensionRequired:         {400, "FAILED_PRECONDITION"},
		a2a.KindVersionNotSupported:       {400, "FAILED_PRECONDITION"},
		a2a.KindLimited:                   {429, "RESOURCE_EXHAUSTED"},
		a2a.KindUnauthenticated:           {401, "UNAUTHENTICATED"},
	}
	for _, k := range a2a.Kinds() {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %q (%d) has no row in this table", k, int(k))
			continue
		}
		s, mapped := statuses[k]
		if !mapped || s.code != w.code || s.name != w.status {
			t.Errorf("kind %q: %+v (mapped %v), want %d %s", k, s, mapped, w.code, w.status)
		}
		got := answer(t, a2a.Errorf(k, "x"))
		if got.Status != w.code || got.Error.Code != w.code || got.Error.Status != w.status || got.Error.Message != "x" {
			t.Errorf("kind %q answered %+v", k, got)
		}
		if d := got.Error.Details; len(d) != 1 || d[0].Type != "type.googleapis.com/google.rpc.ErrorInfo" ||
			d[0].Reason != k.Reason() || d[0].Domain != k.Domain() {
			t.Errorf("kind %q: details %+v, want an ErrorInfo reason %q domain %q", k, d, k.Reason(), k.Domain())
		}
	}
	if len(statuses) != len(a2a.Kinds()) {
		t.Errorf("statuses maps %d kinds, a2a.Kinds has %d", len(statuses), len(a2a.Kinds()))
	}
	// A refused field adds a google.rpc.BadRequest to the ErrorInfo.
	field := answer(t, &a2a.FieldError{Field: "message.parts", Limit: 10})
	if d := field.Error.Details; field.Status != 400 || len(d) != 2 || d[0].Reason != "INVALID_PARAMS" ||
		d[1].Type != "type.googleapis.com/google.rpc.BadRequest" {
		t.Errorf("field error answered %+v", field)
	}
	// A limit says whose it is and when to retry.
	inst := answer(t, &a2a.LimitError{Scope: a2a.LimitInstance, Message: "full", RetryAfter: 1500 * time.Millisecond})
	if inst.Status != 503 || inst.Error.Status != "UNAVAILABLE" || inst.RetryAfter != "2" {
		t.Errorf("instance limit answered %+v", inst)
	}
	client := answer(t, &a2a.LimitError{Scope: a2a.LimitClient, Message: "yours", RetryAfter: time.Second})
	if client.Status != 429 || client.Error.Status != "RESOURCE_EXHAUSTED" || client.RetryAfter != "1" {
		t.Errorf("client limit answered %+v", client)
	}
}

type answered struct {
	Status     int
	RetryAfter string
	Error      struct {
		Code    int
		Status  string
		Message string
		Details []struct {
			Type           string `json:"@type"`
			Reason, Domain string
		}
	}
}

// answer is what the binding answers a route that fails with err.
func answer(t *testing.T, err error) answered {
	t.Helper()
	h := &Handler{log: nil}
	app := fiber.New()
	app.Get("/", func(c *fiber.Ctx) error { return h.fail(c, "", a2a.V10, err) })
	resp, terr := app.Test(httptest.NewRequest(http.MethodGet, "/", nil), -1)
	if terr != nil {
		t.Fatal(terr)
	}
	defer resp.Body.Close()
	var a answered
	if derr := json.NewDecoder(resp.Body).Decode(&a); derr != nil {
		t.Fatal(derr)
	}
	a.Status, a.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	return a
}
