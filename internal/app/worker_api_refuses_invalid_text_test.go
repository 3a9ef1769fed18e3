package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The worker API refuses a body that decoding would alter: bytes that are
// not UTF-8, or an escaped lone surrogate, would reach the task as U+FFFD.
func TestWorkerAPIRefusesInvalidText(t *testing.T) {
	t.Parallel()
	r := startWorkerRelay(t, nil)
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"not UTF-8", "{\"leaseId\":\"a\xffb\"}", http.StatusBadRequest},
		{"lone surrogate", `{"leaseId":"a\ud800b"}`, http.StatusBadRequest},
		{"valid text", `{"leaseId":"am9icw.abc \ud83d\ude00"}`, http.StatusNotFound}, // read, then no such lease
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/tasks/x/heartbeat", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testWorkerToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var out struct{ Code, Error string }
			_ = json.Unmarshal(raw, &out)
			if resp.StatusCode != tt.status || tt.status == http.StatusBadRequest && !strings.Contains(out.Error, "UTF-8") {
				t.Errorf("status %d %s, want %d", resp.StatusCode, raw, tt.status)
			}
		})
	}
}
