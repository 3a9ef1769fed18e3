package auth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// Sign returns claims as a JWT signed with the current key, with the
// header's kid naming that key. The header is the key's, encoded once; the
// claims are encoded as JSON, and the signature is the key's method's.
func (k *Keys) Sign(claims jwt.Claims) (string, error) {
	cur := k.state.Load().current
	body, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("auth: sign: %w", err)
	}
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(cur.header)+1+enc.EncodedLen(len(body))+1+enc.EncodedLen(512))
	buf = append(buf, cur.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, body)
	sig, err := cur.method.Sign(string(buf), cur.private)
	if err != nil {
		return "", fmt.Errorf("auth: sign: %w", err)
	}
	buf = append(buf, '.')
	return string(enc.AppendEncode(buf, sig)), nil
}

// CurrentKID returns the kid Sign uses now.
func (k *Keys) CurrentKID() string { return k.state.Load().current.kid }

// DetachedJWS is a JWS (RFC 7515) in the parts the flattened JSON
// serialization has, without its payload: the base64url protected header
// and the base64url signature. KID names the key that signed it.
type DetachedJWS struct {
	Protected, Signature, KID string
}

// SignDetached signs payload as a JWS with the current key. The protected
// header is {"alg","kid","typ":"JOSE"}, and "jku" when jku is not empty
// (the URL of the JWKS that publishes the key); the signing input is the
// protected header and the base64url payload joined by a dot. The payload
// is not part of the result: whoever verifies rebuilds it (an agent card's
// signature is over the card's canonical form, A2A §8.4).
func (k *Keys) SignDetached(payload []byte, jku string) (DetachedJWS, error) {
	cur := k.state.Load().current
	h := struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
		Jku string `json:"jku,omitempty"`
	}{cur.alg, cur.kid, "JOSE", jku}
	hb, err := json.Marshal(h)
	if err != nil {
		return DetachedJWS{}, fmt.Errorf("auth: sign: %w", err)
	}
	enc := base64.RawURLEncoding
	protected := enc.EncodeToString(hb)
	sig, err := cur.method.Sign(protected+"."+enc.EncodeToString(payload), cur.private)
	if err != nil {
		return DetachedJWS{}, fmt.Errorf("auth: sign: %w", err)
	}
	return DetachedJWS{Protected: protected, Signature: enc.EncodeToString(sig), KID: cur.kid}, nil
}
