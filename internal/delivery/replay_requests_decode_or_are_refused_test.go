package delivery

import (
	"strings"
	"testing"
	"time"
)

// A replay request's body decodes to the window it names, or is refused
// with a message; any body is answered without panicking.
func TestReplayRequestsDecodeOrAreRefused(t *testing.T) {
	t.Parallel()
	q, msg := decodeReplay([]byte(`{"url":"http://127.0.0.1/x","since":"2026-01-02T15:04:05Z","until":"2026-01-02T16:04:05.5+01:00"}`))
	if msg != "" || q.URL != "http://127.0.0.1/x" || !q.Since.Equal(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)) ||
		!q.Until.Equal(time.Date(2026, 1, 2, 15, 4, 5, 5e8, time.UTC)) {
		t.Fatalf("decoded %+v, %q", q, msg)
	}
	for _, b := range []string{``, `[]`, `{"since":1}`, `{"taskId":"t"}`, `{"taskId":"t","since":"x"}`,
		`{"configId":"c","since":"2026-01-02T15:04:05Z"}`, `{"taskId":"t","since":"2026-01-02T15:04:05Z","x":1}`,
		`{"taskId":"t","since":"2026-01-02T15:04:05Z"}{}`, `{"taskId":"` + strings.Repeat("a", maxReplayBody) + `"}`} {
		if _, msg := decodeReplay([]byte(b)); msg == "" {
			t.Errorf("decodeReplay(%.40q) took it", b)
		}
	}
}

func FuzzDecodeReplay(f *testing.F) {
	f.Add([]byte(`{"taskId":"t","configId":"c","since":"2026-01-02T15:04:05Z"}`))
	f.Add([]byte(`{"url":"http://a/","since":"2026-01-02T15:04:05Z","until":"2026-01-03T15:04:05Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, msg := decodeReplay(b)
		if msg == "" && (q.Since.IsZero() || (q.TaskID == "" && q.ConfigID != "")) {
			t.Fatalf("decodeReplay(%q) took %+v", b, q)
		}
	})
}
