package webhook

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// notificationJWT finds the JWT: A2A-Notification-JWT, else Authorization:
// Bearer when its credentials look like a JWT (relay sends the config's
// own credentials there when it has some).
func notificationJWT(h http.Header) string {
	if t := strings.TrimSpace(h.Get(HeaderJWT)); t != "" {
		return t
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if cred = strings.TrimSpace(cred); ok && strings.EqualFold(scheme, "Bearer") && looksLikeJWT(cred) {
		return cred
	}
	return ""
}

// looksLikeJWT reports whether s is three dot-separated segments whose
// first is a base64url JSON object with an "alg".
func looksLikeJWT(s string) bool {
	head, _, ok := strings.Cut(s, ".")
	if !ok || strings.Count(s, ".") != 2 || len(head) > 1024 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		Alg string `json:"alg"`
	}
	return err == nil && json.Unmarshal(b, &h) == nil && h.Alg != ""
}

// checkSecrets checks the token headers and Authorization against the
// configured values (every copy of a header must match).
func (v *Verifier) checkSecrets(h http.Header) error {
	if v.cfg.Token != "" {
		n := 0
		for _, name := range []string{HeaderToken, HeaderTokenV1} {
			for _, got := range h.Values(name) {
				if !secretEqual(got, v.cfg.Token) {
					return fmt.Errorf("%w: %s does not match", ErrToken, name)
				}
				n++
			}
		}
		if n == 0 {
			return fmt.Errorf("%w: no %s or %s header", ErrToken, HeaderToken, HeaderTokenV1)
		}
	}
	if v.cfg.Authorization != "" {
		got := h.Values("Authorization")
		if len(got) != 1 || !secretEqual(got[0], v.cfg.Authorization) {
			return fmt.Errorf("%w: Authorization is not the push config's credentials", ErrAuthorization)
		}
	}
	return nil
}

// secretEqual compares in time independent of where they differ.
func secretEqual(a, b string) bool {
	x, y := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// readBody reads r's body, at most MaxBody bytes, and puts it back.
func (v *Verifier) readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > v.cfg.MaxBody {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrBodyTooLarge, r.ContentLength, v.cfg.MaxBody)
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, v.cfg.MaxBody+1))
		if err != nil {
			return nil, fmt.Errorf("%w: reading it: %v", ErrBody, err)
		}
	}
	if int64(len(body)) > v.cfg.MaxBody {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, v.cfg.MaxBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
