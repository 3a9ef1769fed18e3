package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/golang-jwt/jwt/v5"
	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2arelay/relay/internal/config"
)

// cardSignature is one entry of a card's "signatures".
type cardSignature struct{ Protected, Signature string }

// verifyCard checks a served card's signatures as a client does (A2A
// §8.4.3): it drops "signatures", canonicalizes the rest with RFC 8785,
// and verifies each JWS with the key the JWKS, fetched from relay,
// publishes under the protected header's kid, until one verifies; it
// returns that one's kid.
func verifyCard(t *testing.T, r *relay, card []byte) (kid string, err error) {
	t.Helper()
	payload, sigs := cardPayload(t, card)
	for _, sig := range sigs {
		if kid, err = verifyCardSignature(t, r, payload, sig); err == nil {
			return kid, nil
		}
	}
	return kid, err
}

// cardPayload returns the RFC 8785 form of card without "signatures", and
// its signatures (at least one).
func cardPayload(t *testing.T, card []byte) ([]byte, []cardSignature) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(card, &doc); err != nil {
		t.Fatalf("card %s: %v", card, err)
	}
	var sigs []cardSignature
	raw, _ := json.Marshal(doc["signatures"])
	if err := json.Unmarshal(raw, &sigs); err != nil || len(sigs) == 0 {
		t.Fatalf("signatures = %s (%v)", raw, err)
	}
	delete(doc, "signatures")
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := jcs.Transform(body)
	if err != nil {
		t.Fatal(err)
	}
	return payload, sigs
}

// verifyCardSignature verifies one JWS of a card over payload with the key
// of relay's JWKS its kid names.
func verifyCardSignature(t *testing.T, r *relay, payload []byte, sig cardSignature) (kid string, err error) {
	t.Helper()
	hb, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	if h["alg"] != "ES256" || h["typ"] != "JOSE" || h["kid"] == "" || h["jku"] != "https://relay.example.test/.well-known/jwks.json" {
		t.Fatalf("protected header = %s", hb)
	}
	_, _, jwks := get(t, r.url+"/.well-known/jwks.json")
	var set struct{ Keys []map[string]string }
	if err := json.Unmarshal(jwks, &set); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(set.Keys, func(k map[string]string) bool { return k["kid"] == h["kid"] })
	if i < 0 {
		t.Fatalf("kid %q is not in the JWKS %s", h["kid"], jwks)
	}
	coord := func(name string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(set.Keys[i][name])
		if err != nil || len(b) != 32 {
			t.Fatalf("JWK %s: %v", name, err)
		}
		return b
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), slices.Concat([]byte{4}, coord("x"), coord("y")))
	if err != nil {
		t.Fatal(err)
	}
	s, err := base64.RawURLEncoding.DecodeString(sig.Signature)
	if err != nil {
		t.Fatal(err)
	}
	return h["kid"], jwt.SigningMethodES256.Verify(sig.Protected+"."+base64.RawURLEncoding.EncodeToString(payload), s, pub)
}

// asAgentCard is card as a client built on the v1.0 proto types encodes
// it again: read into the AgentCard message, members it does not know
// left out, written as ProtoJSON.
func asAgentCard(t *testing.T, card []byte) []byte {
	t.Helper()
	var m a2apb.AgentCard
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(card, &m); err != nil {
		t.Fatal(err)
	}
	out, err := protojson.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tamper returns card with one member of its JSON replaced.
func tamper(t *testing.T, card []byte, key string, value any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(card, &doc); err != nil {
		t.Fatal(err)
	}
	doc[key] = value
	out, _ := json.Marshal(doc)
	return out
}

// The card lists every binding relay serves, in both dialects' fields,
// with URLs from public_url (HTTP+JSON under /v1 for v1.0, at the base
// URL for v0.3, which appends /v1 itself) and the gRPC interface at
// grpc_public_url; it is signed over its JCS form with a key of relay's
// JWKS, and a changed field no longer verifies; a key rotation re-signs it.
func TestTheCardIsSignedAndListsEveryBinding(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		c.PublicURL = "https://relay.example.test"
		c.GRPCAddr, c.GRPCPublicURL = "127.0.0.1:0", "relay.example.test:8443"
	})
	status, h, card := get(t, r.url+"/.well-known/agent-card.json")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	var doc struct {
		URL, PreferredTransport string
		SupportedInterfaces     []struct{ URL, ProtocolBinding, ProtocolVersion string }
		AdditionalInterfaces    []struct{ URL, Transport string }
	}
	if err := json.Unmarshal(card, &doc); err != nil {
		t.Fatal(err)
	}
	type iface struct{ url, binding, version string }
	var v10 []iface
	for _, i := range doc.SupportedInterfaces {
		v10 = append(v10, iface{i.URL, i.ProtocolBinding, i.ProtocolVersion})
	}
	wantV10 := []iface{{"https://relay.example.test/", "JSONRPC", "1.0"}, {"https://relay.example.test/v1", "HTTP+JSON", "1.0"},
		{"relay.example.test:8443", "GRPC", "1.0"}}
	if !slices.Equal(v10, wantV10) {
		t.Errorf("supportedInterfaces = %+v, want %+v", v10, wantV10)
	}
	var v03 []iface
	for _, i := range doc.AdditionalInterfaces {
		v03 = append(v03, iface{i.URL, i.Transport, ""})
	}
	wantV03 := []iface{{"https://relay.example.test/", "JSONRPC", ""}, {"https://relay.example.test", "HTTP+JSON", ""},
		{"relay.example.test:8443", "GRPC", ""}}
	if !slices.Equal(v03, wantV03) || doc.URL != "https://relay.example.test/" || doc.PreferredTransport != "JSONRPC" {
		t.Errorf("v0.3: url %q, preferredTransport %q, additionalInterfaces %+v, want %+v", doc.URL, doc.PreferredTransport, v03, wantV03)
	}

	// Two signatures with one key: the first over the whole card, the
	// second over the card as the v1.0 AgentCard message carries it.
	payload, sigs := cardPayload(t, card)
	if len(sigs) != 2 {
		t.Fatalf("%d signatures, want 2", len(sigs))
	}
	kid, err := verifyCardSignature(t, r, payload, sigs[0])
	if err != nil {
		t.Fatalf("the served card does not verify with its first signature: %v", err)
	}
	asMessage, _ := cardPayload(t, asAgentCard(t, card))
	if kid2, err := verifyCardSignature(t, r, asMessage, sigs[1]); err != nil || kid2 != kid {
		t.Fatalf("the card read as an AgentCard message does not verify with the second signature (kid %q, first %q): %v", kid2, kid, err)
	}
	if _, err := verifyCardSignature(t, r, payload, sigs[1]); err == nil {
		t.Fatal("the second signature verifies the whole card")
	}
	if _, err := verifyCard(t, r, tamper(t, card, "name", "someone else")); err == nil {
		t.Fatal("a card with another name verifies")
	}
	if _, err := verifyCard(t, r, tamper(t, card, "iconUrl", "https://evil.example.test/i.png")); err == nil {
		t.Fatal("a card with an added field verifies")
	}

	// A rotation re-signs the card with the new key, under a new ETag.
	if err := r.app.keys.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, h2, card2 := get(t, r.url+"/.well-known/agent-card.json")
	kid2, err := verifyCard(t, r, card2)
	if err != nil || kid2 == kid || h2.Get("ETag") == h.Get("ETag") {
		t.Fatalf("after a rotation: kid %q (was %q), ETag %q (was %q), %v", kid2, kid, h2.Get("ETag"), h.Get("ETag"), err)
	}
}

// Without a gRPC listener the card lists no gRPC interface, even with
// grpc_public_url set.
func TestTheCardListsGRPCOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(*config.Config){nil, func(c *config.Config) { c.GRPCPublicURL = "relay.example.test:8443" }} {
		r := startRelay(t, mut)
		_, _, card := get(t, r.url+"/.well-known/agent-card.json")
		if strings.Contains(string(card), "GRPC") || !strings.Contains(string(card), `"HTTP+JSON"`) {
			t.Fatalf("card = %s", card)
		}
	}
}

// The card holds no Protocol Buffer default value among the fields the
// v1.0 proto knows (no empty string, list or object, no false optional
// boolean), so a verifier that removes defaults before canonicalizing (A2A
// §8.4.3 step 3) gets the payload that was signed: the whole card for the
// first signature, the card as the AgentCard message carries it for the
// second, where ProtoJSON would keep an explicit false.
func TestTheCardHoldsNoDefaultValues(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, nil)
	_, _, card := get(t, r.url+"/.well-known/agent-card.json")
	var doc map[string]any
	if err := json.Unmarshal(card, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["securityRequirements"] == nil {
		t.Fatalf("card without securityRequirements: %s", card)
	}
	var walk func(path string, v any, falseToo bool)
	walk = func(path string, v any, falseToo bool) {
		switch v := v.(type) {
		case string:
			if v == "" {
				t.Errorf("%s is an empty string", path)
			}
		case bool:
			if !v && falseToo {
				t.Errorf("%s is false", path)
			}
		case []any:
			// v0.3's security lists scopes per scheme: the v1.0 proto does
			// not know it, so no verifier strips it.
			if len(v) == 0 && !strings.HasPrefix(path, "$.security[") {
				t.Errorf("%s is an empty list", path)
			}
			for i, e := range v {
				walk(path+"["+strconv.Itoa(i)+"]", e, falseToo)
			}
		case map[string]any:
			if len(v) == 0 && !strings.HasPrefix(path, "$.securityRequirements[") {
				t.Errorf("%s is an empty object", path)
			}
			for k, e := range v {
				walk(path+"."+k, e, falseToo)
			}
		}
	}
	walk("$", doc, false)
	var v10 map[string]any
	if err := json.Unmarshal(asAgentCard(t, card), &v10); err != nil {
		t.Fatal(err)
	}
	walk("$", v10, true)
}
