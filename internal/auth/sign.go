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
