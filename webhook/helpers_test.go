package webhook_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/webhook"
)

// The tests build notifications exactly as relay does: bodies with
// a2a.EncodeNotification, JWTs signed by auth.Keys (relay's signer, here
// with a key file instead of Redis), the claims and headers of
// delivery.Workers.setHeaders, and the JWKS auth.Keys publishes.

const (
	testIssuer = "https://relay.example.test"
	testHook   = "https://app.example.test/a2a/hook"
)

// clock is a settable clock shared by the test relay and the verifier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testRelay signs notifications and serves its JWKS on 127.0.0.1.
type testRelay struct {
	t     *testing.T
	clock *clock
	srv   *httptest.Server
	hits  atomic.Int64 // JWKS fetches

	mu        sync.Mutex
	published []*auth.Keys // the JWKS, current key first
	seq       int
}

func newTestRelay(t *testing.T, alg string) *testRelay {
	t.Helper()
	tr := &testRelay{t: t, clock: newClock()}
	tr.published = []*auth.Keys{newKeys(t, alg)}
	tr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != webhook.JWKSPath {
			http.NotFound(w, r)
			return
		}
		tr.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", auth.JWKSCacheControl)
		_, _ = w.Write(tr.jwks())
	}))
	t.Cleanup(tr.srv.Close)
	return tr
}

// newKeys returns relay's signer for a fresh key of alg.
func newKeys(t *testing.T, alg string) *auth.Keys {
	t.Helper()
	var (
		key crypto.Signer
		err error
	)
	switch alg {
	case auth.ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case auth.EdDSA:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	case auth.RS256:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := auth.NewKeys(context.Background(), nil, auth.KeyConfig{Algorithm: alg, KeyFile: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwks merges the JWKS of every published signer, current first.
func (tr *testRelay) jwks() []byte {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var all []json.RawMessage
	for _, k := range tr.published {
		var set struct{ Keys []json.RawMessage }
		if err := json.Unmarshal(k.JWKS(), &set); err != nil {
			panic(err)
		}
		all = append(all, set.Keys...)
	}
	b, _ := json.Marshal(map[string]any{"keys": all})
	return b
}

// rotate makes a new key of alg current; the old ones stay published.
func (tr *testRelay) rotate(alg string) {
	k := newKeys(tr.t, alg)
	tr.mu.Lock()
	tr.published = append([]*auth.Keys{k}, tr.published...)
	tr.mu.Unlock()
}

func (tr *testRelay) signer() *auth.Keys {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.published[0]
}

func (tr *testRelay) jwksURL() string { return tr.srv.URL + webhook.JWKSPath }

// verifier returns a Verifier for testHook trusting tr, after mut.
func (tr *testRelay) verifier(mut func(*webhook.Config)) *webhook.Verifier {
	tr.t.Helper()
	cfg := webhook.Config{Issuer: testIssuer, JWKSURL: tr.jwksURL(), Audience: testHook, Now: tr.clock.Now}
	if mut != nil {
		mut(&cfg)
	}
	v, err := webhook.NewVerifier(cfg)
	if err != nil {
		tr.t.Fatal(err)
	}
	return v
}

// note is one notification about to be POSTed; tests may change any part.
type note struct {
	cfg    a2a.PushConfig
	n      a2a.Notification
	id     string
	claims jwt.MapClaims
	signer interface {
		Sign(jwt.Claims) (string, error)
	}
	header http.Header // set after the relay's headers (a nil value deletes one)
}

// note renders ev (and the task after it) as relay would for a config of
// dialect d at testHook.
func (tr *testRelay) note(d a2a.Dialect, ev a2a.Event, snap a2a.Task) *note {
	tr.t.Helper()
	n, err := a2a.EncodeNotification(d, ev, snap)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.mu.Lock()
	tr.seq++
	id := "nid-" + string(d) + "-" + strconv.Itoa(tr.seq)
	tr.mu.Unlock()
	cfg := a2a.PushConfig{ID: "cfg-1", TaskID: snap.ID, URL: testHook, Dialect: d}
	now := tr.clock.Now()
	return &note{cfg: cfg, n: n, id: id, signer: tr.signer(), header: http.Header{}, claims: jwt.MapClaims{
		"iss": testIssuer, "aud": cfg.URL, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": id, "taskId": cfg.TaskID, "request_body_sha256": sha256Hex(n.Body),
	}}
}

// request signs the note and returns the POST, headers as relay sets them.
func (nt *note) request(t *testing.T) *http.Request {
	t.Helper()
	tok, err := nt.signer.Sign(nt.claims)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, nt.cfg.URL, bytes.NewReader(nt.n.Body))
	h := r.Header
	h.Set("Content-Type", nt.n.ContentType)
	h.Set("User-Agent", "relay/test")
	h.Set("A2A-Version", nt.n.Version)
	h.Set("A2A-Notification-Id", nt.id)
	h.Set("A2A-Notification-JWT", tok)
	if a := nt.cfg.Auth; a != nil && a.Credentials != "" {
		h.Set("Authorization", a.Schemes[0]+" "+a.Credentials)
	} else {
		h.Set("Authorization", "Bearer "+tok)
	}
	if nt.cfg.Token != "" {
		h.Set("X-A2A-Notification-Token", nt.cfg.Token)
		h.Set("A2A-Notification-Token", nt.cfg.Token)
	}
	for k, vs := range nt.header {
		if vs == nil {
			delete(h, http.CanonicalHeaderKey(k))
		} else {
			h[http.CanonicalHeaderKey(k)] = vs
		}
	}
	return r
}

// Sample events and snapshots, with every kind of part.

func agentMsg(text string) *a2a.Message {
	return &a2a.Message{MessageID: "m-agent-" + text, Role: a2a.RoleAgent, TaskID: "task-1", ContextID: "ctx-1",
		Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}
}

func sampleTask(state a2a.TaskState) a2a.Task {
	return a2a.Task{ID: "task-1", ContextID: "ctx-1", Metadata: json.RawMessage(`{"trace":"abc"}`),
		Status: a2a.TaskStatus{State: state, Message: agentMsg("status " + string(state)), Timestamp: "2026-03-01T12:00:00Z"},
		History: []a2a.Message{{MessageID: "m-user-1", Role: a2a.RoleUser, TaskID: "task-1", ContextID: "ctx-1",
			Parts: []a2a.Part{{Kind: a2a.PartText, Text: "hello"}, {Kind: a2a.PartData, Data: json.RawMessage(`{"n":1}`)}}}},
		Artifacts: []a2a.Artifact{sampleArtifact()},
	}
}

func sampleArtifact() a2a.Artifact {
	return a2a.Artifact{ArtifactID: "art-1", Name: "report", Description: "the report",
		Parts: []a2a.Part{
			{Kind: a2a.PartText, Text: "chunk one"},
			{Kind: a2a.PartFile, File: &a2a.File{Name: "r.pdf", MimeType: "application/pdf", Bytes: "JVBERi0="}},
			{Kind: a2a.PartFile, File: &a2a.File{URI: "https://files.example.test/r.csv", MimeType: "text/csv"}},
			{Kind: a2a.PartData, Data: json.RawMessage(`{"rows":3}`), Metadata: json.RawMessage(`{"k":"v"}`)},
		}}
}

func statusEvent(state a2a.TaskState) a2a.Event {
	st := a2a.TaskStatus{State: state, Message: agentMsg("status " + string(state)), Timestamp: "2026-03-01T12:00:01Z"}
	return a2a.Event{Kind: a2a.EventStatus, TaskID: "task-1", ContextID: "ctx-1", Status: &st,
		Final: state.Terminal(), Metadata: json.RawMessage(`{"step":2}`)}
}

func artifactEvent() a2a.Event {
	a := sampleArtifact()
	return a2a.Event{Kind: a2a.EventArtifact, TaskID: "task-1", ContextID: "ctx-1", Artifact: &a, Append: true, LastChunk: true}
}

func taskEvent(t a2a.Task) a2a.Event {
	return a2a.Event{Kind: a2a.EventTask, TaskID: t.ID, ContextID: t.ContextID, Task: &t}
}

// sameJSON fails unless a and b marshal to equal JSON values.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	var g, w any
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(gb, &g)
	_ = json.Unmarshal(wb, &w)
	if gs, ws := mustJSON(g), mustJSON(w); gs != ws {
		t.Fatalf("%s:\n got %s\nwant %s", what, gs, ws)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
