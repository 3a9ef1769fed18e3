package app

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/webhook"
)

// eqDelivered waits until path has received the notification that ends
// its task's turn, verifies each notification as a receiver does (the
// public webhook package: JWT signed with a key of relay's JWKS, audience
// the webhook, token, body hash, task id), and returns one line per
// notification (retries of one id counted once): content type, dialect,
// kind, state and what it carries.
func eqDelivered(t *testing.T, r *relay, s *sink, path string) []string {
	t.Helper()
	v, err := webhook.NewVerifier(webhook.Config{Issuer: r.url, Audience: s.url(path), Token: eqPushToken})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	seen := map[string]bool{}
	for n := 1; ; n++ {
		h := s.waitHits(t, path, n, time.Minute)[n-1]
		req := httptest.NewRequest("POST", s.url(path), bytes.NewReader(h.body))
		req.Header = h.header.Clone()
		note, err := v.Verify(req)
		if err != nil {
			t.Fatalf("%s: notification %d does not verify: %v\n%s", path, n, err, h.body)
		}
		if seen[note.ID] {
			continue
		}
		seen[note.ID] = true
		line := fmt.Sprintf("%s %s %s %s", h.header.Get("Content-Type"), note.Dialect, note.Kind, note.State)
		if note.Artifact != nil {
			line += fmt.Sprintf(" artifact %q", eqArtifactText(note.Artifact))
		}
		lines = append(lines, line)
		if note.Final {
			return lines
		}
	}
}

func eqArtifactText(a *webhook.Artifact) string {
	var s []string
	for _, p := range a.Parts {
		s = append(s, p.Text)
	}
	return strings.Join(s, "")
}

// Push delivery is the same whichever binding registered the config, and
// however: for otherwise identical tasks, a config registered with the
// message (inline) or with the create method, over JSON-RPC, HTTP+JSON
// or gRPC, gets the same notifications, in the same order, in the same
// dialect and body shape, each verifying with the public webhook package.
// Each task first stops at input-required; the config is registered
// while it waits, and the message that resumes it (carrying the config,
// inline) runs its second turn, whose notifications are compared.
func TestPushDeliveryIsTheSameWhicheverBindingRegisteredTheConfig(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t) // the card and the JWT's issuer name the address relay listens on
	r := startTenantRelay(t, func(c *config.Config) { withGRPC(c); c.Addr, c.PublicURL = addr, "http://"+addr })
	s := newSink(t)
	bindings := map[string]binding{"JSON-RPC": jsonrpcBinding{url: r.url}, "HTTP+JSON": restBinding{url: r.url}, "gRPC": grpcBinding{c: grpcClient(t, r)}}
	want := strings.Join([]string{
		"application/a2a+json 1.0 status-update working",
		"application/a2a+json 1.0 status-update working",
		"application/a2a+json 1.0 status-update working",
		`application/a2a+json 1.0 artifact-update  artifact "hello"`,
		"application/a2a+json 1.0 status-update completed",
	}, "\n")
	for _, name := range []string{"JSON-RPC", "HTTP+JSON", "gRPC"} {
		for _, how := range []string{"inline", "create"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				t.Parallel()
				b := bindings[name]
				first, kind := b.send(aliceKey, eqSendArgs{blocking: true, outcome: "input-required"})
				eqMust(t, "first send", kind)
				if first.State != "TASK_STATE_INPUT_REQUIRED" {
					t.Fatalf("first turn: %+v", first)
				}
				path := "/" + strings.ToLower(strings.ReplaceAll(name, "+", "-")) + "/" + how
				next := eqSendArgs{taskID: first.ID, blocking: true, steps: 2}
				if how == "inline" {
					next.pushURL = s.url(path)
				} else {
					_, kind := b.createConfig(aliceKey, first.ID, "hook", s.url(path))
					eqMust(t, "create config", kind)
				}
				done, kind := b.send(aliceKey, next)
				eqMust(t, "second send", kind)
				if done.State != "TASK_STATE_COMPLETED" {
					t.Fatalf("second turn: %+v", done)
				}
				if got := strings.Join(eqDelivered(t, r, s, path), "\n"); got != want {
					t.Errorf("%s, config %s: notifications\n%s\nwant\n%s", name, how, got, want)
				}
			})
		}
	}
}
