package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/webhook"
)

func notificationClaims(aud string) *webhook.Claims {
	now := time.Now()
	return &webhook.Claims{Issuer: "https://relay.example", Audience: aud, IssuedAt: now.Unix(),
		ExpiresAt: now.Add(5 * time.Minute).Unix(), ID: "0d9b3c0e-5f7a-4b9c-9a51-6f1f0c3e9b21",
		RelayClaims: webhook.RelayClaims{TaskID: "task-123", BodySHA256: strings.Repeat("ab", 32)}}
}

// A notification token appended to a buffer leaves what the buffer held,
// carries the claims' JSON as json.Marshal writes it, verifies with the
// key's public half, and is the token Sign returns (every algorithm relay
// signs with is deterministic), for every algorithm.
func TestNotificationTokenAppendedInPlace(t *testing.T) {
	t.Parallel()
	for _, alg := range []string{ES256, EdDSA, RS256} {
		rdb, prefix := redistest.New(t)
		k, err := NewKeys(t.Context(), rdb, KeyConfig{Algorithm: alg, Prefix: prefix + "relay"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, aud := range []string{"https://client.example/hook", "http://h.example/?a=<1>&b=\u2028"} {
			claims := notificationClaims(aud)
			buf := make([]byte, 0, 8) // grown as it goes
			buf = append(buf, "Bearer "...)
			buf, err := k.AppendSign(buf, claims)
			if err != nil {
				t.Fatal(err)
			}
			tok, ok := bytes.CutPrefix(buf, []byte("Bearer "))
			if !ok {
				t.Fatalf("%s: the buffer's start was overwritten: %q", alg, buf)
			}
			segs := strings.Split(string(tok), ".")
			if len(segs) != 3 {
				t.Fatalf("%s: token %q", alg, tok)
			}
			body, err := base64.RawURLEncoding.DecodeString(segs[1])
			want, _ := json.Marshal(claims)
			if err != nil || !bytes.Equal(body, want) {
				t.Fatalf("%s: claims %s (%v), want %s", alg, body, err, want)
			}
			var got webhook.Claims
			parsed, err := jwt.ParseWithClaims(string(tok), &got, k.VerifyKeyFunc(), jwt.WithValidMethods([]string{alg}))
			if err != nil || !parsed.Valid || got != *claims {
				t.Fatalf("%s: token does not verify: %v (%+v)", alg, err, got)
			}
			again, err := k.Sign(claims)
			if err != nil || again != string(tok) {
				t.Fatalf("%s: Sign = %q, %v; AppendSign gave %q", alg, again, err, tok)
			}
		}
	}
}

// BenchmarkSignNotification signs the claims of one notification as
// delivery does: webhook.Claims, appended to a reused buffer.
func BenchmarkSignNotification(b *testing.B) {
	rdb, prefix := redistest.New(b)
	k, err := NewKeys(b.Context(), rdb, KeyConfig{Algorithm: ES256, Prefix: prefix + "relay"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	claims := notificationClaims("https://client.example/hook")
	b.Run("Sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.Sign(claims); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendSign", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			if buf, err = k.AppendSign(buf[:0], claims); err != nil {
				b.Fatal(err)
			}
		}
	})
}
