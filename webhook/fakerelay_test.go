package webhook_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/webhook"
)

// fakeRelay stands in for relay in the examples: it serves a JWKS and
// builds notifications as relay sends them (relay's own encoder and signer).
type fakeRelay struct {
	Issuer  string
	JWKSURL string
	srv     *httptest.Server
	keys    *auth.Keys
	dir     string
}

func newFakeRelay() *fakeRelay {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	dir, err := os.MkdirTemp("", "fakerelay-")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		panic(err)
	}
	keys, err := auth.NewKeys(context.Background(), nil, auth.KeyConfig{KeyFile: path}, nil)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(keys.JWKS())
	}))
	return &fakeRelay{Issuer: "https://relay.example.com", JWKSURL: srv.URL + webhook.JWKSPath, srv: srv, keys: keys, dir: dir}
}

func (f *fakeRelay) Close() {
	f.srv.Close()
	_ = os.RemoveAll(f.dir)
}

// statusUpdate is the POST relay sends to url when task-1 enters state.
func (f *fakeRelay) statusUpdate(url, token, dialect, id, state string) *http.Request {
	st := a2a.TaskStatus{State: a2a.TaskState(state), Timestamp: "2026-03-01T12:00:00Z"}
	snap := a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: st}
	ev := a2a.Event{Kind: a2a.EventStatus, TaskID: "task-1", ContextID: "ctx-1", Status: &st}
	return f.post(url, token, a2a.Dialect(dialect), id, ev, snap)
}

// artifactUpdate is the POST relay sends to url when task-1 gets an artifact.
func (f *fakeRelay) artifactUpdate(url, token, dialect, id string) *http.Request {
	art := a2a.Artifact{ArtifactID: "report", Parts: []a2a.Part{{Kind: a2a.PartText, Text: "42"}}}
	snap := a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.StateWorking}, Artifacts: []a2a.Artifact{art}}
	ev := a2a.Event{Kind: a2a.EventArtifact, TaskID: "task-1", ContextID: "ctx-1", Artifact: &art, LastChunk: true}
	return f.post(url, token, a2a.Dialect(dialect), id, ev, snap)
}

func (f *fakeRelay) post(url, token string, d a2a.Dialect, id string, ev a2a.Event, snap a2a.Task) *http.Request {
	n, err := a2a.EncodeNotification(d, ev, snap)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	tok, err := f.keys.Sign(jwt.MapClaims{"iss": f.Issuer, "aud": url, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": id, "taskId": snap.ID, "request_body_sha256": sha256Hex(n.Body)})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodPost, url, bytes.NewReader(n.Body))
	r.Header.Set("Content-Type", n.ContentType)
	r.Header.Set("A2A-Version", n.Version)
	r.Header.Set("A2A-Notification-Id", id)
	r.Header.Set("A2A-Notification-JWT", tok)
	r.Header.Set("Authorization", "Bearer "+tok)
	if token != "" {
		r.Header.Set("X-A2A-Notification-Token", token)
		r.Header.Set("A2A-Notification-Token", token)
	}
	return r
}
