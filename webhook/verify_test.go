package webhook_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/webhook"
)

func TestVerifyEachDialect(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	created := sampleTask(a2a.StateSubmitted)
	created.Artifacts, created.Status.Message = nil, nil
	for _, d := range []a2a.Dialect{a2a.V10, a2a.V03, a2a.V01} {
		for _, tc := range []struct {
			name string
			ev   a2a.Event
			snap a2a.Task
		}{
			{"task", taskEvent(created), created},
			{"working", statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking)},
			{"artifact", artifactEvent(), sampleTask(a2a.StateWorking)},
			{"input-required", statusEvent(a2a.StateInputRequired), sampleTask(a2a.StateInputRequired)},
			{"completed", statusEvent(a2a.StateCompleted), sampleTask(a2a.StateCompleted)},
		} {
			t.Run(string(d)+"/"+tc.name, func(t *testing.T) {
				nt := tr.note(d, tc.ev, tc.snap)
				r := nt.request(t)
				n, err := v.Verify(r)
				if err != nil {
					t.Fatal(err)
				}
				if n.ID != nt.id || !n.IssuedAt.Equal(tr.clock.Now().Truncate(time.Second)) || n.Dialect != webhook.Dialect(d) ||
					n.TaskID != "task-1" || n.ContextID != "ctx-1" || !bytes.Equal(n.Body, nt.n.Body) {
					t.Fatalf("notification %+v", n)
				}
				if rest, _ := io.ReadAll(r.Body); !bytes.Equal(rest, nt.n.Body) {
					t.Fatalf("the body was not put back: %q", rest)
				}
				checkDecoded(t, d, tc.ev, tc.snap, n)
			})
		}
	}
}

// checkDecoded compares a decoded notification with what relay encoded.
func checkDecoded(t *testing.T, d a2a.Dialect, ev a2a.Event, snap a2a.Task, n *webhook.Notification) {
	t.Helper()
	wantState := webhook.State(snap.Status.State)
	wantFinal := snap.Status.State.Terminal() || snap.Status.State.Interrupted()
	switch {
	case d == a2a.V10 && ev.Kind == a2a.EventStatus:
		if n.Kind != webhook.KindStatusUpdate || n.State != wantState || n.Final != wantFinal || n.Task != nil {
			t.Fatalf("v1.0 status update decoded as %+v", n)
		}
		sameJSON(t, "status", n.Status, ev.Status)
		sameJSON(t, "metadata", n.Metadata, ev.Metadata)
		if n.Status.Message.Text() != "status "+string(snap.Status.State) || n.Status.Message.Role != webhook.RoleAgent {
			t.Fatalf("status message %+v", n.Status.Message)
		}
		var raw struct{ Status struct{ State string } }
		if err := json.Unmarshal(n.Raw, &raw); err != nil || raw.Status.State[:11] != "TASK_STATE_" {
			t.Fatalf("Raw is not the statusUpdate object: %s", n.Raw)
		}
	case d == a2a.V10 && ev.Kind == a2a.EventArtifact:
		if n.Kind != webhook.KindArtifactUpdate || !n.Append || !n.LastChunk || n.State != "" || n.Status != nil {
			t.Fatalf("v1.0 artifact update decoded as %+v", n)
		}
		sameJSON(t, "artifact", n.Artifact, ev.Artifact)
	case d == a2a.V10:
		if n.Kind != webhook.KindTask || n.State != wantState || n.Status != &n.Task.Status {
			t.Fatalf("v1.0 task decoded as %+v", n)
		}
		sameJSON(t, "task", n.Task, ev.Task)
	case d == a2a.V03:
		// A v0.3 notification is the task after the event, whatever the event.
		if n.Kind != webhook.KindTask || n.State != wantState || n.Final != wantFinal || n.Status != &n.Task.Status {
			t.Fatalf("v0.3 snapshot decoded as %+v", n)
		}
		sameJSON(t, "task", n.Task, snap)
		if !bytes.Equal(n.Raw, n.Body) {
			t.Fatal("v0.3 Raw is not the body")
		}
	case d == a2a.V01:
		if n.Kind != webhook.KindTask || n.State != wantState || n.Final != wantFinal || n.Task.ContextID != snap.ContextID {
			t.Fatalf("v0.1 snapshot decoded as %+v", n)
		}
		if len(n.Task.History) != len(snap.History) || len(n.Task.Artifacts) != len(snap.Artifacts) {
			t.Fatalf("v0.1 history/artifacts %+v", n.Task)
		}
		for i, h := range snap.History {
			sameJSON(t, "v0.1 history parts", n.Task.History[i].Parts, h.Parts)
			if n.Task.History[i].Role != webhook.Role(h.Role) {
				t.Fatalf("v0.1 role %q", n.Task.History[i].Role)
			}
		}
		for i, a := range snap.Artifacts {
			got := n.Task.Artifacts[i]
			if got.Index != i || got.Name != a.Name || got.Description != a.Description {
				t.Fatalf("v0.1 artifact %+v", got)
			}
			sameJSON(t, "v0.1 artifact parts", got.Parts, a.Parts)
		}
		if n.Status.Message.Text() != "status "+string(snap.Status.State) && snap.Status.Message != nil {
			t.Fatalf("v0.1 status message %+v", n.Status.Message)
		}
	}
}

func TestVerifyAlgorithms(t *testing.T) {
	t.Parallel()
	for _, alg := range []string{auth.ES256, auth.EdDSA, auth.RS256} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			tr := newTestRelay(t, alg)
			v := tr.verifier(nil)
			r := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking)).request(t)
			if tok := r.Header.Get("A2A-Notification-JWT"); !jwtAlg(t, tok, alg) {
				t.Fatalf("relay did not sign with %s", alg)
			}
			if _, err := v.Verify(r); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func jwtAlg(t *testing.T, tok, alg string) bool {
	t.Helper()
	p, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	return err == nil && p.Method.Alg() == alg
}

// forger signs claims with a key relay never published, under any kid.
type forger struct {
	method jwt.SigningMethod
	key    any
	kid    string
}

func (f forger) Sign(c jwt.Claims) (string, error) {
	t := jwt.NewWithClaims(f.method, c)
	if f.kid != "" {
		t.Header["kid"] = f.kid
	}
	return t.SignedString(f.key)
}

func TestVerifyRejects(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	tests := []struct {
		name string
		mut  func(tr *testRelay, nt *note, cfg *webhook.Config)
		want error
	}{
		{"signed by another relay's key", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.signer = newKeys(tr.t, auth.ES256)
		}, webhook.ErrBadSignature},
		{"forged under the published kid", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.signer = forger{jwt.SigningMethodES256, ec, tr.signer().CurrentKID()}
		}, webhook.ErrBadSignature},
		{"RS256 under an ES256 kid", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.signer = forger{jwt.SigningMethodRS256, rsaKey, tr.signer().CurrentKID()}
		}, webhook.ErrBadSignature},
		{"HS256", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.signer = forger{jwt.SigningMethodHS256, []byte("guessable"), tr.signer().CurrentKID()}
		}, webhook.ErrBadSignature},
		{"no kid", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.signer = forger{jwt.SigningMethodES256, ec, ""}
		}, webhook.ErrBadSignature},
		{"malformed JWT", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.header.Set("A2A-Notification-JWT", "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln")
		}, webhook.ErrMalformed},
		{"no JWT", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.header.Set("A2A-Notification-JWT", "")
			nt.header.Set("Authorization", "Bearer not-a-jwt")
		}, webhook.ErrNoJWT},
		{"tampered body", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.n.Body = bytes.Replace(nt.n.Body, []byte("TASK_STATE_WORKING"), []byte("TASK_STATE_FAILED"), 1)
		}, webhook.ErrBodyHash},
		{"no body hash", func(_ *testRelay, nt *note, _ *webhook.Config) { delete(nt.claims, "request_body_sha256") }, webhook.ErrBodyHash},
		{"wrong aud", func(_ *testRelay, nt *note, _ *webhook.Config) { nt.claims["aud"] = "https://evil.example.test/hook" }, webhook.ErrAudience},
		{"no aud", func(_ *testRelay, nt *note, _ *webhook.Config) { delete(nt.claims, "aud") }, webhook.ErrAudience},
		{"wrong iss", func(_ *testRelay, nt *note, _ *webhook.Config) { nt.claims["iss"] = "https://other-relay.example.test" }, webhook.ErrIssuer},
		{"expired", func(tr *testRelay, nt *note, _ *webhook.Config) {
			now := tr.clock.Now()
			nt.claims["iat"], nt.claims["exp"] = now.Add(-2*time.Minute).Unix(), now.Add(-time.Minute).Unix()
		}, webhook.ErrExpired},
		{"issued too long ago", func(tr *testRelay, nt *note, _ *webhook.Config) {
			now := tr.clock.Now()
			nt.claims["iat"], nt.claims["exp"] = now.Add(-6*time.Minute).Unix(), now.Add(time.Hour).Unix()
		}, webhook.ErrExpired},
		{"issued too long ago for MaxAge", func(tr *testRelay, nt *note, cfg *webhook.Config) {
			cfg.MaxAge = time.Minute
			nt.claims["iat"] = tr.clock.Now().Add(-2 * time.Minute).Unix()
		}, webhook.ErrExpired},
		{"issued in the future", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.claims["iat"] = tr.clock.Now().Add(2 * time.Minute).Unix()
		}, webhook.ErrNotYetValid},
		{"no exp", func(_ *testRelay, nt *note, _ *webhook.Config) { delete(nt.claims, "exp") }, webhook.ErrClaims},
		{"no iat", func(_ *testRelay, nt *note, _ *webhook.Config) { delete(nt.claims, "iat") }, webhook.ErrClaims},
		{"no jti", func(_ *testRelay, nt *note, _ *webhook.Config) { delete(nt.claims, "jti") }, webhook.ErrNotificationID},
		{"other notification id", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.header.Set("A2A-Notification-Id", "nid-other")
		}, webhook.ErrNotificationID},
		{"no notification id header", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.header.Set("A2A-Notification-Id", "")
		}, webhook.ErrNotificationID},
		{"wrong token", func(_ *testRelay, nt *note, cfg *webhook.Config) { nt.cfg.Token, cfg.Token = "tok-a", "tok-b" }, webhook.ErrToken},
		{"no token", func(_ *testRelay, _ *note, cfg *webhook.Config) { cfg.Token = "tok-b" }, webhook.ErrToken},
		{"one token header wrong", func(_ *testRelay, nt *note, cfg *webhook.Config) {
			nt.cfg.Token, cfg.Token = "tok-a", "tok-a"
			nt.header.Set("A2A-Notification-Token", "tok-b")
		}, webhook.ErrToken},
		{"wrong credentials", func(_ *testRelay, nt *note, cfg *webhook.Config) {
			nt.cfg.Auth = &a2a.PushAuth{Schemes: []string{"Bearer"}, Credentials: "secret-a"}
			cfg.Authorization = "Bearer secret-b"
		}, webhook.ErrAuthorization},
		{"other task", func(_ *testRelay, nt *note, _ *webhook.Config) { nt.claims["taskId"] = "task-2" }, webhook.ErrTaskID},
		{"no task id", func(_ *testRelay, nt *note, _ *webhook.Config) { delete(nt.claims, "taskId") }, webhook.ErrTaskID},
		{"body too large", func(_ *testRelay, _ *note, cfg *webhook.Config) { cfg.MaxBody = 64 }, webhook.ErrBodyTooLarge},
		{"signed body that is no notification", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.n.Body = []byte(`{"task":{"id":"task-1"},"statusUpdate":{"taskId":"task-1"}}`)
			rehash(nt)
		}, webhook.ErrBody},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTestRelay(t, auth.ES256)
			nt := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
			var cfg webhook.Config
			tc.mut(tr, nt, &cfg)
			v := tr.verifier(func(c *webhook.Config) {
				c.Token, c.Authorization, c.MaxAge, c.MaxBody = cfg.Token, cfg.Authorization, cfg.MaxAge, cfg.MaxBody
			})
			n, err := v.Verify(nt.request(t))
			if !errors.Is(err, tc.want) || n != nil {
				t.Fatalf("Verify = %v, %v; want %v", n, err, tc.want)
			}
			for _, other := range allErrors {
				if other != tc.want && errors.Is(err, other) {
					t.Fatalf("%v also matches %v", err, other)
				}
			}
		})
	}
}

var allErrors = []error{webhook.ErrNoJWT, webhook.ErrMalformed, webhook.ErrBadSignature, webhook.ErrKeysUnavailable,
	webhook.ErrClaims, webhook.ErrIssuer, webhook.ErrAudience, webhook.ErrExpired, webhook.ErrNotYetValid,
	webhook.ErrNotificationID, webhook.ErrToken, webhook.ErrAuthorization, webhook.ErrBodyTooLarge,
	webhook.ErrBodyHash, webhook.ErrBody, webhook.ErrTaskID, webhook.ErrReplayed}

// rehash sets the body hash claim for the note's (changed) body.
func rehash(nt *note) {
	nt.claims["request_body_sha256"] = sha256Hex(nt.n.Body)
}

func TestVerifyAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mut  func(tr *testRelay, nt *note, cfg *webhook.Config)
	}{
		{"token and credentials", func(_ *testRelay, nt *note, cfg *webhook.Config) {
			nt.cfg.Token, cfg.Token = "tok", "tok"
			nt.cfg.Auth = &a2a.PushAuth{Schemes: []string{"Bearer"}, Credentials: "client-secret"}
			cfg.Authorization = "Bearer client-secret"
		}},
		{"JWT in Authorization only", func(_ *testRelay, nt *note, _ *webhook.Config) {
			nt.header.Set("A2A-Notification-JWT", "")
		}},
		{"one token header", func(_ *testRelay, nt *note, cfg *webhook.Config) {
			nt.cfg.Token, cfg.Token = "tok", "tok"
			nt.header["X-A2A-Notification-Token"] = nil
		}},
		{"iat in the future within leeway", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.claims["iat"] = tr.clock.Now().Add(20 * time.Second).Unix()
		}},
		{"expired within leeway", func(tr *testRelay, nt *note, _ *webhook.Config) {
			nt.claims["exp"] = tr.clock.Now().Add(-20 * time.Second).Unix()
		}},
		{"issuer with a trailing slash", func(_ *testRelay, _ *note, cfg *webhook.Config) { cfg.Issuer = testIssuer + "/" }},
		{"aud as an array", func(_ *testRelay, nt *note, _ *webhook.Config) { nt.claims["aud"] = []string{"x", testHook} }},
		{"AudienceFunc", func(_ *testRelay, nt *note, cfg *webhook.Config) {
			nt.cfg.URL = testHook + "?task=task-1"
			nt.claims["aud"] = nt.cfg.URL
			cfg.Audience, cfg.AudienceFunc = "", func(aud string) bool { return aud == testHook+"?task=task-1" }
		}},
		{"no A2A-Version: sniffed", func(_ *testRelay, nt *note, _ *webhook.Config) { nt.header.Set("A2A-Version", "") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTestRelay(t, auth.ES256)
			nt := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
			cfg := webhook.Config{Issuer: testIssuer, JWKSURL: tr.jwksURL(), Audience: testHook, Now: tr.clock.Now}
			tc.mut(tr, nt, &cfg)
			v, err := webhook.NewVerifier(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := v.Verify(nt.request(t)); err != nil || n.State != webhook.StateWorking {
				t.Fatalf("Verify = %+v, %v", n, err)
			}
		})
	}
}
