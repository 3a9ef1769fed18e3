package workerapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Metadata a worker posts, wherever an event carries it, is a JSON object
// (or null) as A2A has it; anything else is refused with a 400 in the
// worker API's error shape naming the event and the field, and nothing
// reaches the backend.
func TestPostedMetadataMustBeAnObject(t *testing.T) {
	t.Parallel()
	const status = `"status":{"state":"TASK_STATE_WORKING"`
	tests := []struct {
		name, version, event string
		field                string // named in the error; "": accepted
	}{
		{"status update object", "1.0", `{"statusUpdate":{` + status + `},"metadata":{"k":1}}}`, ""},
		{"status update null", "1.0", `{"statusUpdate":{` + status + `},"metadata":null}}`, ""},
		{"status update string", "1.0", `{"statusUpdate":{` + status + `},"metadata":"k"}}`, "events[0]: metadata must be a JSON object"},
		{"status message array", "1.0", `{"statusUpdate":{` + status + `,"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}],"metadata":[1]}}}}`,
			"events[0]: status.message.metadata must be a JSON object"},
		{"status message part number", "1.0", `{"statusUpdate":{` + status + `,"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x","metadata":3}]}}}}`,
			"events[0]: status.message.parts[0].metadata must be a JSON object"},
		{"artifact", "1.0", `{"artifactUpdate":{"artifact":{"artifactId":"a","parts":[{"text":"x"}],"metadata":true}}}`,
			"events[0]: artifact.metadata must be a JSON object"},
		{"artifact part", "1.0", `{"artifactUpdate":{"artifact":{"artifactId":"a","parts":[{"text":"x"},{"text":"y","metadata":"v"}]}}}`,
			"events[0]: artifact.parts[1].metadata must be a JSON object"},
		{"artifact update v0.3", "0.3", `{"kind":"artifact-update","metadata":[],"artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]}}`,
			"events[0]: metadata must be a JSON object"},
		{"artifact v0.3 object", "0.3", `{"kind":"artifact-update","metadata":{},"artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x","metadata":{"k":"v"}}],"metadata":{}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &fakePull{}
			body := `{"leaseId":"l","events":[` + tt.event + `]}`
			req := httptest.NewRequest(http.MethodPost, "/v1/tasks/t1/events", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+fuzzToken)
			req.Header.Set("A2A-Version", tt.version)
			resp, err := newTestApp(p).Test(req, 5000)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if tt.field == "" {
				if resp.StatusCode != http.StatusOK || len(p.posted) != 1 {
					t.Fatalf("status %d (%d events posted), want 200 and the event: %s", resp.StatusCode, len(p.posted), raw)
				}
				return
			}
			var e struct{ Error, Code string }
			if err := json.Unmarshal(raw, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Code != "bad_request" || e.Error != tt.field {
				t.Fatalf("status %d %s, want 400 bad_request %q", resp.StatusCode, raw, tt.field)
			}
			if len(p.posted) != 0 {
				t.Fatalf("%d events reached the backend", len(p.posted))
			}
		})
	}
}
