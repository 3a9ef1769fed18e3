package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestJWKSAlgorithms(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	es256, es384 := newIssuerKey(t, "ES256", "es256"), newIssuerKey(t, "ES384", "es384")
	rs, ps := newIssuerKey(t, "RS256", "rsa"), newIssuerKey(t, "PS256", "rsa")
	ed := newIssuerKey(t, "EdDSA", "ed")
	srv := newJWKSServer(t)
	rsaJWK := publicJWK(t, rs)
	delete(rsaJWK, "alg") // an RSA key without alg verifies RS256 and PS256
	edJWK := publicJWK(t, ed)
	delete(edJWK, "use")
	rsOnly := publicJWK(t, rs)
	rsOnly["kid"] = "rs-only"
	srv.serveJWKs(t, publicJWK(t, es256), publicJWK(t, es384), rsaJWK, edJWK, rsOnly)
	c := newJWKSClients(t, srv, clk, nil)
	for _, k := range []*issuerKey{es256, es384, rs, ps, ed} {
		if _, err := c.Authenticate(t.Context(), bearer(k.mint(t, clk.claims()))); err != nil {
			t.Errorf("%s: %v", k.alg, err)
		}
	}
	psOnRSOnly := &issuerKey{kid: "rs-only", alg: "PS256", priv: rs.priv}
	if _, err := c.Authenticate(t.Context(), bearer(psOnRSOnly.mint(t, clk.claims()))); !errors.Is(err, ErrBadCredentials) ||
		!strings.Contains(err.Error(), "not allowed for key") {
		t.Errorf("PS256 token for a JWK with alg RS256: %v", err)
	}
	// An ES384 token naming the P-256 key's kid.
	confused := &issuerKey{kid: "es256", alg: "ES384", priv: es384.priv}
	if _, err := c.Authenticate(t.Context(), bearer(confused.mint(t, clk.claims()))); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("ES384 token naming a P-256 key: %v", err)
	}
}

func TestJWKSKeysWithoutKid(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	anon, named := newIssuerKey(t, "ES256", ""), newIssuerKey(t, "EdDSA", "named")
	for _, tc := range []struct {
		name   string
		served []*issuerKey
		token  *issuerKey
		ok     bool
	}{
		{"one key without kid, token without kid", []*issuerKey{anon}, anon, true},
		{"one key without kid, token with kid", []*issuerKey{anon}, &issuerKey{kid: "x", alg: "ES256", priv: anon.priv}, false},
		{"one key with kid, token without kid", []*issuerKey{named}, &issuerKey{alg: "EdDSA", priv: named.priv}, true},
		{"two keys, token without kid", []*issuerKey{anon, named}, anon, false},
		{"two keys, token with kid", []*issuerKey{anon, named}, named, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newJWKSServer(t, tc.served...)
			c := newJWKSClients(t, srv, clk, nil)
			_, err := c.Authenticate(t.Context(), bearer(tc.token.mint(t, clk.claims())))
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok = %v", err, tc.ok)
			}
		})
	}
}

func TestParseJWKSet(t *testing.T) {
	t.Parallel()
	ec := publicJWK(t, newIssuerKey(t, "ES256", "ec"))
	with := func(base map[string]any, kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	offCurve := with(ec, "y", ec["x"])
	for _, tc := range []struct {
		name string
		jwk  map[string]any
		want string // skip reason
	}{
		{"P-521", with(ec, "crv", "P-521", "alg", nil), "EC curve"},
		{"oct", map[string]any{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}, "kty"},
		{"use enc", with(ec, "use", "enc"), "use"},
		{"key_ops encrypt", with(ec, "key_ops", []string{"encrypt"}), "key_ops"},
		{"alg of another type", with(ec, "alg", "RS256"), "alg"},
		{"alg HS256", with(ec, "alg", "HS256"), "alg"},
		{"alg none", with(ec, "alg", "none"), "alg"},
		{"short x", with(ec, "x", "AAAA"), "x and y"},
		{"off the curve", offCurve, "EC P-256"},
		{"x not a string", with(ec, "x", 12), "bad JSON"},
		{"Ed448", map[string]any{"kty": "OKP", "crv": "Ed448", "x": "AAAA"}, "OKP curve"},
		{"RSA even exponent", map[string]any{"kty": "RSA", "n": ec["x"], "e": "AAAC"}, "RSA exponent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			set, skipped, err := parseJWKSet([]byte(mustJSON(t, map[string]any{"keys": []any{tc.jwk, with(ec, "kid", "good")}})))
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != 1 || !strings.Contains(skipped[0], tc.want) || set.size != 1 || set.byKid["good"] == nil {
				t.Fatalf("skipped %q (want one with %q), %d keys", skipped, tc.want, set.size)
			}
		})
	}
	t.Run("duplicate kid dropped", func(t *testing.T) {
		t.Parallel()
		other := publicJWK(t, newIssuerKey(t, "ES256", "ec"))
		set, skipped, err := parseJWKSet([]byte(mustJSON(t, map[string]any{"keys": []any{ec, other, ec, with(ec, "kid", "good")}})))
		if err != nil || set.byKid["ec"] != nil || set.size != 1 || len(skipped) != 1 {
			t.Fatalf("set %+v, skipped %q, err %v", set, skipped, err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{``, `[]`, `{"keys":{}}`, `{"keys":null}`, `{"keys":[]}`, `{"keys":[{"kty":"oct"}]}`} {
			if _, _, err := parseJWKSet([]byte(body)); err == nil {
				t.Errorf("%s: no error", body)
			}
		}
	})
}
