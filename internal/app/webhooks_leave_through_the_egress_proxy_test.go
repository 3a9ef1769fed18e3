package app

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/ssrf/proxytest"
)

// TestWebhooksLeaveThroughTheEgressProxy: with RELAY_WEBHOOK_PROXY every
// notification goes through the proxy, which is asked for the checked
// IP:port; a proxy that refuses the tunnel fails the attempt with error
// class "proxy", and its credentials are not in the log.
func TestWebhooksLeaveThroughTheEgressProxy(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	p := proxytest.New(t, "relay", "proxy-pass")
	r := deliveringRelay(t, func(c *config.Config) { c.WebhookProxy = "http://relay:proxy-pass@" + p.Addr() })
	sendWithStandard(t, r, s.url("/through"), "", "")
	s.waitHits(t, "/through", 5, 10*time.Second)
	u, _ := url.Parse(s.srv.URL)
	targets := p.Targets()
	if len(targets) == 0 {
		t.Fatal("no CONNECT: the notifications did not go through the proxy")
	}
	for _, target := range targets {
		if target != "127.0.0.1:"+u.Port() {
			t.Fatalf("CONNECT targets %v, want the checked 127.0.0.1:%s", targets, u.Port())
		}
	}

	refusing := proxytest.New(t, "relay", "other-pass")
	r2 := deliveringRelay(t, func(c *config.Config) { c.WebhookProxy = "http://relay:proxy-pass@" + refusing.Addr() })
	taskID := sendWithStandard(t, r2, s.url("/refused"), "", "")
	var attempts []struct{ ErrorClass, Error string }
	deadline := time.Now().Add(10 * time.Second)
	for len(attempts) == 0 && time.Now().Before(deadline) {
		var list struct{ Deliveries []struct{ ID string } }
		_, _, body := get(t, r2.url+"/v1/deliveries?task="+taskID+"&status=failed")
		if json.Unmarshal(body, &list) == nil && len(list.Deliveries) > 0 {
			var one struct {
				Attempts []struct{ ErrorClass, Error string } `json:"attemptLog"`
			}
			_, _, body := get(t, r2.url+"/v1/deliveries/"+list.Deliveries[0].ID)
			_ = json.Unmarshal(body, &one)
			attempts = one.Attempts
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(attempts) == 0 || attempts[0].ErrorClass != "proxy" || !strings.Contains(attempts[0].Error, "407") ||
		strings.Contains(attempts[0].Error, "proxy-pass") {
		t.Fatalf("attempts through a refusing proxy: %+v", attempts)
	}
	if len(s.hitsOf("/refused")) != 0 {
		t.Fatal("a notification reached the webhook around the proxy")
	}
}
