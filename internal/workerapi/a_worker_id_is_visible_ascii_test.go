package workerapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A worker id is up to 128 visible ASCII characters: one with a space, a
// control character or a non-ASCII letter is refused with a 400 naming the
// field, before any claim reaches the queue (the id names the claim's
// consumer, and the lease the queue stores cuts its parts at spaces).
func TestAWorkerIDIsVisibleASCII(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"worker-7", true},
		{"w_1.a:b/c@d", true},
		{strings.Repeat("w", 128), true},
		{"", true}, // (a random id is made)
		{"x 1700000000000-0/1 y", false},
		{"tab\there", false},
		{"ünï", false},
		{strings.Repeat("w", 129), false},
	} {
		req := httptest.NewRequest(http.MethodPost, "/v1/queues/jobs/claim",
			strings.NewReader(`{"workerId":`+strconvQuote(tt.id)+`,"waitSeconds":0}`))
		req.Header.Set("Authorization", "Bearer "+fuzzToken)
		resp, err := newTestApp(&fakePull{}).Test(req, 5000)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error, Code string }
		_ = json.Unmarshal(raw, &e)
		switch {
		case tt.ok && resp.StatusCode == http.StatusBadRequest:
			t.Errorf("workerId %q refused: %s", tt.id, raw)
		case !tt.ok && (resp.StatusCode != http.StatusBadRequest || e.Code != "bad_request" || !strings.HasPrefix(e.Error, "workerId: ")):
			t.Errorf("workerId %q: status %d %s, want 400 bad_request naming workerId", tt.id, resp.StatusCode, raw)
		}
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
