package auth

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/redistest"
)

// A detached JWS verifies, as a JWS with the payload put back, against the
// key the JWKS publishes under the header's kid, for every algorithm; its
// protected header is {alg, kid, typ: JOSE, jku}; another payload fails.
func TestDetachedSignaturesVerifyAgainstTheJWKS(t *testing.T) {
	t.Parallel()
	for _, alg := range []string{ES256, EdDSA, RS256} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			rdb, prefix := redistest.New(t)
			k := newKeys(t, rdb, KeyConfig{Algorithm: alg, Prefix: prefix + "relay"}, nil)
			payload := []byte(`{"a":1,"b":"card"}`)
			s, err := k.SignDetached(payload, "https://relay.example.test/.well-known/jwks.json")
			if err != nil {
				t.Fatal(err)
			}
			raw, err := base64.RawURLEncoding.DecodeString(s.Protected)
			if err != nil {
				t.Fatal(err)
			}
			var h map[string]string
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			if h["alg"] != alg || h["kid"] != k.CurrentKID() || s.KID != h["kid"] || h["typ"] != "JOSE" ||
				h["jku"] != "https://relay.example.test/.well-known/jwks.json" || len(h) != 4 {
				t.Fatalf("protected header = %v (kid %q)", h, s.KID)
			}
			keyfunc := jwksKeyfunc(t, k.JWKS())
			check := func(payload []byte) error {
				tok := s.Protected + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + s.Signature
				_, err := jwt.NewParser(jwt.WithValidMethods([]string{alg})).ParseWithClaims(tok, jwt.MapClaims{}, keyfunc)
				return err
			}
			if err := check(payload); err != nil {
				t.Fatalf("signature does not verify: %v", err)
			}
			if err := check([]byte(`{"a":2,"b":"card"}`)); err == nil {
				t.Fatal("signature verifies over another payload")
			}
		})
	}
}
