package app

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Bad replay requests get a 400 that says what is wrong; replays of what
// does not exist a 404.
func TestReplayRequestsAreChecked(t *testing.T) {
	t.Parallel()
	r := deliveringRelay(t, nil)
	now := rfc3339(time.Now())
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`not json`, 400},
		{`{"since":"` + now + `"}`, 400},
		{`{"taskId":"t","url":"http://127.0.0.1/x","since":"` + now + `"}`, 400},
		{`{"taskId":"t"}`, 400},
		{`{"taskId":"t","since":"yesterday"}`, 400},
		{`{"taskId":"t","since":"` + now + `","until":"2000-01-01T00:00:00Z"}`, 400},
		{`{"url":"ftp://127.0.0.1/x","since":"` + now + `"}`, 400},
		{`{"configId":"c","since":"` + now + `"}`, 400},
		{`{"taskId":"t","since":"` + now + `","extra":1}`, 400},
		{`{"taskId":"t","since":"` + now + `"} {}`, 400},
		{`{"taskId":"no-such-task","since":"` + now + `"}`, 404},
		{`{"url":"http://127.0.0.1:1/nobody","since":"` + now + `"}`, 404},
	} {
		resp, err := http.Post(r.url+"/v1/deliveries/replay", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var b [512]byte
		n, _ := resp.Body.Read(b[:])
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b[:n]), `"error"`) {
			t.Errorf("%s: %d %s, want %d with an error", tc.body, resp.StatusCode, b[:n], tc.status)
		}
	}
}
