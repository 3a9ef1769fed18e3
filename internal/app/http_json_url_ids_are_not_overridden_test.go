package app

import (
	"net/http"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// A body member that names the URL's task in another ASCII case (Go's
// decoder reads "taskid" as taskId) is refused like one named exactly:
// a push config created under /v1/tasks/{A}/... never lands on task B.
func TestHTTPJSONURLIdsAreNotOverriddenByACaseVariant(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.WebhookAllowCIDRs = []string{"127.0.0.0/8"} })
	var a, b struct{ Task v10Task }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message("a", nil)}), &a)
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message("b", nil)}), &b)
	res := r.rest(http.MethodPost, "/v1/tasks/"+a.Task.ID+"/pushNotificationConfigs",
		map[string]any{"taskid": b.Task.ID, "id": "c1", "url": "http://127.0.0.1:9/hook"})
	if res.Status == http.StatusOK {
		t.Fatalf("POST under task %s with a body naming %s as taskid: %s", a.Task.ID, b.Task.ID, res.Body)
	}
	wantRESTError(t, res, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks/"+a.Task.ID+"/pushNotificationConfigs/c1?taskid="+b.Task.ID, nil),
		http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
}
