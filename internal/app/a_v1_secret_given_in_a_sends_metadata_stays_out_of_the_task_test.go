package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/a2arelay/relay/internal/a2a"
)

// The webhook extension's params may come in a send's metadata, for the
// config given inline (the only way over gRPC). They are the config's: a
// v1 secret among them is sealed with the config and signs its webhooks,
// and is not kept in the task's metadata, where every answer, every
// webhook (of any config of the task) and every agent would see it in
// clear. The send's other metadata stays the task's.
func TestAV1SecretGivenInASendsMetadataStaysOutOfTheTask(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	secret := newStandardSecret(t)
	key := strings.TrimPrefix(secret, "whsec_")
	res := r.callRaw("SendMessage", map[string]any{"message": v10Message("sign me", nil),
		"metadata": map[string]any{"app": "kept",
			a2a.WebhookExtensionURI: map[string]any{"standardWebhooks": map[string]any{"scheme": "v1", "secret": secret}}},
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": s.url("/m")}}})
	if res.Error != nil {
		t.Fatalf("send: %d %s", res.Error.Code, res.Error.Message)
	}
	if strings.Contains(string(res.Result), key) {
		t.Fatalf("the send's answer holds the secret: %s", res.Result)
	}
	var out struct{ Task v10Task }
	if err := json.Unmarshal(res.Result, &out); err != nil || out.Task.ID == "" {
		t.Fatalf("send answer %s: %v", res.Result, err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range s.waitHits(t, "/m", 5, 10*time.Second) {
		if strings.Contains(string(h.body), key) {
			t.Fatalf("a webhook body holds the secret: %s", h.body)
		}
		if err := wh.Verify(h.body, h.header); err != nil {
			t.Fatalf("the config does not sign with the send's secret: %v", err)
		}
	}
	got := r.callRaw("GetTask", map[string]any{"id": out.Task.ID})
	if got.Error != nil || strings.Contains(string(got.Result), key) || !strings.Contains(string(got.Result), `"app":"kept"`) {
		t.Fatalf("GetTask: %s (error %+v): want the send's other metadata, not its secret", got.Result, got.Error)
	}
}
