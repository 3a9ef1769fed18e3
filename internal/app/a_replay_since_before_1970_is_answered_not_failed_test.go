package app

import (
	"net/http"
	"testing"
	"time"
)

// A replay whose window starts (or ends) before 1970 is bad input, or
// simply a window with nothing in it: it never reaches Redis as a stream id
// Redis refuses (which answered 503, "cannot replay now", and would again
// however often the operator retried).
func TestAReplaySinceBefore1970IsAnsweredNotFailed(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("early", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "h", "url": s.url("/e")}}}, &res)
	s.waitHits(t, "/e", 1, 10*time.Second)
	for _, body := range []map[string]any{
		{"taskId": res.Task.ID, "since": "1969-12-31T23:59:59Z"},
		{"taskId": res.Task.ID, "since": "0001-01-01T00:00:01Z", "until": "1960-01-01T00:00:00Z"},
		{"url": s.url("/e"), "since": "1900-01-01T00:00:00Z"},
	} {
		code, out := replay(t, r, body)
		if code != http.StatusAccepted && code != http.StatusBadRequest {
			t.Errorf("replay %v: %d %+v, want 202 or 400", body, code, out)
		}
		if code == http.StatusAccepted && body["until"] == nil && out.Queued == 0 {
			t.Errorf("replay %v since before 1970 queued nothing: %+v", body, out)
		}
	}
}
