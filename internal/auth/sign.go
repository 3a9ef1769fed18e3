package auth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// JSONAppender is claims that append their own JSON (the bytes json.Marshal
// would write): webhook.Claims, signed once per notification.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

// Sign returns claims as a JWT signed with the current key, with the
// header's kid naming that key (see AppendSign).
func (k *Keys) Sign(claims jwt.Claims) (string, error) {
	tok, err := k.AppendSign(nil, claims)
	if err != nil {
		return "", err
	}
	return string(tok), nil
}

// AppendSign appends claims as a JWT signed with the current key to dst
// and returns the extended slice. The header is the key's, encoded once;
// the claims are their AppendJSON when they have one (else json.Marshal),
// base64url-encoded in place in dst; an ES256 signature is made over dst's
// bytes and encoded into it, so that a token costs the signature's own
// allocations and, when dst has room, no other.
func (k *Keys) AppendSign(dst []byte, claims jwt.Claims) ([]byte, error) {
	cur := k.state.Load().current
	enc := base64.RawURLEncoding
	start := len(dst)
	dst = append(dst, cur.header...)
	dst = append(dst, '.')
	at := len(dst)
	if a, ok := claims.(JSONAppender); ok {
		dst = a.AppendJSON(dst)
	} else {
		body, err := json.Marshal(claims)
		if err != nil {
			return dst[:start], fmt.Errorf("auth: sign: %w", err)
		}
		dst = append(dst, body...)
	}
	// The claims' JSON sits at dst[at:]: encode it after itself, then move
	// the encoding over it.
	n := len(dst) - at
	dst = enc.AppendEncode(dst, dst[at:at+n])
	dst = append(dst[:at], dst[at+n:]...)
	signing := dst[start:]
	if es, ok := cur.method.(es256); ok {
		var sig [2 * es256Size]byte
		if err := es.signInto(&sig, signing, cur.private); err != nil {
			return dst[:start], fmt.Errorf("auth: sign: %w", err)
		}
		dst = append(dst, '.')
		return enc.AppendEncode(dst, sig[:]), nil
	}
	sig, err := cur.method.Sign(string(signing), cur.private)
	if err != nil {
		return dst[:start], fmt.Errorf("auth: sign: %w", err)
	}
	dst = append(dst, '.')
	return enc.AppendEncode(dst, sig), nil
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
