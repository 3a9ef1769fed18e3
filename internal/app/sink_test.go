package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// hit is one request a sink received.
type hit struct {
	status int
	at     time.Time
	header http.Header
	body   []byte
}

// sink is a webhook receiver on loopback whose answers a test scripts.
type sink struct {
	srv    *httptest.Server
	mu     sync.Mutex
	hits   map[string][]hit // by path
	answer func(path string, n int) (status int, header map[string]string, delay time.Duration)
	got    chan struct{}
}

func newSink(t *testing.T) *sink {
	s := &sink{hits: map[string][]hit{}, got: make(chan struct{}, 10000),
		answer: func(string, int) (int, map[string]string, time.Duration) { return 200, nil, 0 }}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		at := time.Now()
		s.mu.Lock()
		n := len(s.hits[r.URL.Path])
		answer := s.answer
		s.mu.Unlock()
		status, hdr, delay := answer(r.URL.Path, n)
		s.mu.Lock()
		s.hits[r.URL.Path] = append(s.hits[r.URL.Path], hit{status: status, at: at, header: r.Header.Clone(), body: body})
		s.mu.Unlock()
		time.Sleep(delay)
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", status)
		s.got <- struct{}{}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) url(path string) string { return s.srv.URL + path }

func (s *sink) hitsOf(path string) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits[path]...)
}

// waitHits waits until path has received n requests (bounded).
func (s *sink) waitHits(t *testing.T, path string, n int, within time.Duration) []hit {
	t.Helper()
	deadline := time.After(within)
	for {
		if h := s.hitsOf(path); len(h) >= n {
			return h
		}
		select {
		case <-s.got:
		case <-deadline:
			t.Fatalf("%s: %d requests after %s, want %d", path, len(s.hitsOf(path)), within, n)
		}
	}
}

// jwksKeyfunc verifies tokens with the JWT keys relay publishes (EC P-256
// here), parsed from the JWKS document alone.
func jwksKeyfunc(t *testing.T, r *relay) jwt.Keyfunc {
	t.Helper()
	_, _, body := get(t, r.url+"/.well-known/jwks.json")
	var set struct {
		Keys []struct{ Kid, Kty, Crv, X, Y, Alg string }
	}
	if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) == 0 {
		t.Fatalf("jwks %s: %v", body, err)
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "EC" {
			continue // the Standard Webhooks v1a keys (OKP), which sign no JWT
		}
		x, _ := base64.RawURLEncoding.DecodeString(k.X)
		y, _ := base64.RawURLEncoding.DecodeString(k.Y)
		pt := make([]byte, 65) // the uncompressed point: 4, X, Y
		pt[0] = 4
		copy(pt[33-len(x):33], x)
		copy(pt[65-len(y):], y)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
		if err != nil {
			t.Fatalf("jwks key %s: %v", k.Kid, err)
		}
		keys[k.Kid] = pub
	}
	return func(tok *jwt.Token) (any, error) {
		k, ok := keys[fmt.Sprint(tok.Header["kid"])]
		if !ok {
			return nil, fmt.Errorf("unknown kid %v", tok.Header["kid"])
		}
		return k, nil
	}
}

// delivered lists the kinds of the notifications path accepted (2xx), once
// per notification id, in arrival order.
func (s *sink) delivered(t *testing.T, path string) []string {
	seen := map[string]bool{}
	var kinds []string
	for _, h := range s.hitsOf(path) {
		if id := h.header.Get("A2A-Notification-Id"); h.status == 200 && !seen[id] {
			seen[id] = true
			kinds = append(kinds, streamKind(t, h.body))
		}
	}
	return kinds
}
