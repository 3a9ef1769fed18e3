package workerapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
)

const onePost = `{"leaseId":"l","events":[{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}]}`

// postEvents sends onePost with the given raw header lines (name, value
// pairs) and returns the answer.
func postEvents(t *testing.T, p Pull, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/tasks/t1/events", strings.NewReader(onePost))
	req.Header.Set("Authorization", "Bearer "+fuzzToken)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header[headers[i]] = append(req.Header[headers[i]], headers[i+1])
	}
	resp, err := newTestApp(p).Test(req, 5000)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

// An Idempotency-Key is 1 to 255 visible ASCII characters, sent once; a
// post without one has none. Any other key is a 400 in the worker API's
// error shape, and nothing reaches the backend.
func TestIdempotencyKeyHeaderIsChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []string // the header's values; none: no header
		want   string   // the key the backend gets; "-": refused
	}{
		{"none", nil, ""},
		{"uuid", []string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{"one character", []string{"k"}, "k"},
		{"255 characters", []string{strings.Repeat("k", 255)}, strings.Repeat("k", 255)},
		{"quoted (a structured-field string)", []string{`"abc"`}, `"abc"`},
		{"empty", []string{""}, "-"},
		{"256 characters", []string{strings.Repeat("k", 256)}, "-"},
		{"a space inside", []string{"a b"}, "-"},
		{"a tab inside", []string{"a\tb"}, "-"},
		{"not ASCII", []string{"clé"}, "-"},
		{"twice", []string{"a", "b"}, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &fakePull{key: "unset"}
			var headers []string
			for _, v := range tt.values {
				headers = append(headers, HeaderIdempotencyKey, v)
			}
			resp, raw := postEvents(t, p, headers...)
			if tt.want != "-" {
				if resp.StatusCode != http.StatusOK || p.key != tt.want {
					t.Fatalf("status %d, backend key %q; want 200 and %q: %s", resp.StatusCode, p.key, tt.want, raw)
				}
				return
			}
			var e struct{ Error, Code string }
			if json.Unmarshal(raw, &e) != nil || resp.StatusCode != http.StatusBadRequest || e.Code != "bad_request" || !strings.HasPrefix(e.Error, "Idempotency-Key: ") {
				t.Fatalf("status %d %s, want 400 bad_request about the Idempotency-Key", resp.StatusCode, raw)
			}
			if p.key != "unset" {
				t.Fatalf("the post reached the backend with key %q", p.key)
			}
		})
	}
}

// keyedPull answers every post as the backend does for a key it knows.
type keyedPull struct {
	fakePull
	res ingest.Posted
	err error
}

func (k *keyedPull) PostOnce(context.Context, string, string, string, []a2a.Event) (ingest.Posted, error) {
	return k.res, k.err
}

// A replayed post answers as the first did, marked Idempotent-Replayed; a
// key reused for another request is a 422 idempotency_key_reused.
func TestReplayedAndReusedKeysAnswer(t *testing.T) {
	t.Parallel()
	resp, raw := postEvents(t, &keyedPull{res: ingest.Posted{State: a2a.StateCompleted, Released: true, Replayed: true}}, HeaderIdempotencyKey, "k1")
	if resp.StatusCode != http.StatusOK || resp.Header.Get(HeaderReplayed) != "true" || string(raw) != `{"released":true,"state":"TASK_STATE_COMPLETED"}` {
		t.Fatalf("replay: %d %s %q", resp.StatusCode, resp.Header.Get(HeaderReplayed), raw)
	}
	resp, raw = postEvents(t, &keyedPull{err: fmt.Errorf("ingest: %w", ingest.ErrKeyReused)}, HeaderIdempotencyKey, "k1")
	var e struct{ Error, Code string }
	if json.Unmarshal(raw, &e) != nil || resp.StatusCode != http.StatusUnprocessableEntity || e.Code != "idempotency_key_reused" || !strings.Contains(e.Error, `"k1"`) {
		t.Fatalf("reused key: %d %s, want 422 idempotency_key_reused naming the key", resp.StatusCode, raw)
	}
}

// Any header value parses without a panic, and a key accepted is 1 to 255
// visible ASCII characters, unchanged.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{"", "k", "8e03978e-40d5-43e8-bc93-6894a57f9324", "a b", "\x00", "clé", strings.Repeat("x", 256)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		key, err := parseKey(v)
		if err != nil {
			return
		}
		if key != string(v) || len(key) < 1 || len(key) > MaxIdempotencyKey || !utf8.ValidString(key) {
			t.Fatalf("accepted %q as %q", v, key)
		}
		for _, r := range key {
			if r < 0x21 || r > 0x7e {
				t.Fatalf("accepted %q with %q", key, r)
			}
		}
	})
}
