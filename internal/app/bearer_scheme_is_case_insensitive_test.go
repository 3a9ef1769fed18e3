package app

import (
	"net/http"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// The management and worker APIs read "Authorization: Bearer <token>" as
// the A2A endpoint does: the scheme in any case (RFC 7235), white space
// around the token ignored.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) { c.WorkerTokens = []string{testWorkerToken} })
	tests := []struct {
		scheme string
		ok     bool
	}{
		{"Bearer ", true},
		{"bearer ", true},
		{"BEARER ", true},
		{"bEaReR  ", true},
		{"Basic ", false},
		{"Bearer", false},
	}
	for _, tt := range tests {
		t.Run(tt.scheme, func(t *testing.T) {
			t.Parallel()
			admin, worker := http.StatusUnauthorized, http.StatusUnauthorized
			if tt.ok {
				admin, worker = http.StatusOK, http.StatusBadRequest // the worker call lacks a lease
			}
			if st, _, body := get(t, r.url+"/v1/deliveries?status=dead", "Authorization", tt.scheme+adminTok); st != admin {
				t.Errorf("management API with %q: %d %s, want %d", tt.scheme+"<admin token>", st, body, admin)
			}
			st, out := workerCall(t, r, "/v1/tasks/x/heartbeat", "", map[string]any{}, "Authorization", tt.scheme+testWorkerToken)
			if st != worker {
				t.Errorf("worker API with %q: %d %v, want %d", tt.scheme+"<worker token>", st, out, worker)
			}
		})
	}
}
