package app

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// A remote address that keeps failing authentication is counted across
// instances and, past RELAY_AUTH_FAILURE_LIMIT a second, refused with 429
// and Retry-After on the A2A, management and worker APIs, its credentials
// unread; the failures are logged a line a second at most, not a line
// each; once the window has passed, a good key works again.
func TestFailedAuthenticationsAreLimitedPerAddressAcrossInstances(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := testConfig(t)
	cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
	cfg.Auth = config.AuthAuto
	cfg.Security.APIKeys = []string{"alice:" + auth.HashAPIKey(aliceKey)}
	cfg.Security.AdminTokens = []string{adminTok}
	cfg.Security.SecretKeys = []string{"k1:" + strings.Repeat("A", 43) + "="}
	cfg.Security.AuthFailureLimit = 3
	logs := &syncBuffer{}
	var relays []*relay
	for range 2 { // two instances on one Redis
		a, err := New(Deps{Log: newTextLogger(logs)}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := &relay{t: t, app: a, url: "http://" + a.Addr()}
		t.Cleanup(r.stop)
		relays = append(relays, r)
	}

	// 40 wrong keys, alternating between the instances, within a second or
	// two: whatever second boundary falls among them, one window holds more
	// than 3 failures from each instance's point of view.
	refused := map[int]int{}
	for i := range 40 {
		r := relays[i%2]
		res := as(r, "wrong-key-"+strings.Repeat("x", 20), "GetTask", map[string]any{"id": "x"})
		switch res.Status {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			refused[i%2]++
			if res.Error == nil || res.Error.Code != jsonrpc.CodeLimited {
				t.Fatalf("429 without the rate-limit JSON-RPC error: %+v", res)
			}
		default:
			t.Fatalf("wrong key: HTTP %d", res.Status)
		}
	}
	if refused[0] == 0 || refused[1] == 0 {
		t.Fatalf("refused per instance: %v; want both instances to refuse the address (limit 3/s, 40 failures)", refused)
	}
	// Refused now, before its credentials are read: a good key too, and
	// the management and worker APIs alike.
	for _, r := range relays {
		var n int
		for range 3 { // the refusal lasts the rest of this second and the next; 3 tries cover a boundary
			if res := as(r, aliceKey, "GetTask", map[string]any{"id": "x"}); res.Status == http.StatusTooManyRequests {
				n++
			}
		}
		if n == 0 {
			t.Fatal("a good key from the flooding address was not refused")
		}
	}
	req, _ := http.NewRequest(http.MethodGet, relays[0].url+"/v1/deliveries?status=dead", nil)
	req.Header.Set("Authorization", "Bearer wrong-admin-token-0123456789")
	for range 6 {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			break
		}
	}
	if n := strings.Count(logs.String(), "authentication failed"); n == 0 || n > 8 {
		t.Fatalf("%d log lines for 40+ failed authentications in about a second; want a few (one a second per instance)", n)
	}
	// After the window, a good key works again.
	time.Sleep(2100 * time.Millisecond)
	if res := as(relays[1], aliceKey, "GetTask", map[string]any{"id": "x"}); res.Status == http.StatusTooManyRequests {
		t.Fatal("a good key is still refused 2 s after the flood")
	}
}

func newTextLogger(w *syncBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
