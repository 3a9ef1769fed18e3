package webhook

import (
	"errors"
	"net/http"
)

// The errors of Verify; each error it returns matches exactly one of them
// with errors.Is, and its message says more (never a secret).
var (
	// ErrNoJWT: the request carries no JWT (neither an A2A-Notification-JWT
	// header nor an Authorization: Bearer header holding a JWT).
	ErrNoJWT = errors.New("webhook: no notification JWT")
	// ErrMalformed: the JWT cannot be parsed.
	ErrMalformed = errors.New("webhook: malformed JWT")
	// ErrBadSignature: the signature does not verify: an algorithm other
	// than ES256, EdDSA or RS256, no kid, a kid relay does not publish
	// (after a JWKS refetch), an algorithm that is not its key's, or a
	// signature that is wrong.
	ErrBadSignature = errors.New("webhook: bad signature")
	// ErrKeysUnavailable: relay's JWKS could not be fetched and no keys are
	// cached. This is the receiver's problem, not the sender's: the
	// middleware answers 503 so relay retries.
	ErrKeysUnavailable = errors.New("webhook: relay's JWKS is unavailable")
	// ErrClaims: exp or iat is missing.
	ErrClaims = errors.New("webhook: required JWT claim missing")
	// ErrIssuer: iss is not Config.Issuer.
	ErrIssuer = errors.New("webhook: wrong issuer")
	// ErrAudience: aud is not Config.Audience: the notification was meant
	// for another webhook.
	ErrAudience = errors.New("webhook: wrong audience")
	// ErrExpired: exp has passed, or iat is longer ago than Config.MaxAge.
	ErrExpired = errors.New("webhook: token expired")
	// ErrNotYetValid: iat (or nbf) is in the future, beyond Config.Leeway.
	ErrNotYetValid = errors.New("webhook: token not valid yet")
	// ErrNotificationID: the A2A-Notification-Id header or the jti claim is
	// missing, or they differ.
	ErrNotificationID = errors.New("webhook: notification id mismatch")
	// ErrToken: the push config token (X-A2A-Notification-Token,
	// A2A-Notification-Token) is missing or wrong.
	ErrToken = errors.New("webhook: wrong notification token")
	// ErrAuthorization: the Authorization header is not Config.Authorization.
	ErrAuthorization = errors.New("webhook: wrong Authorization")
	// ErrBodyTooLarge: the body is longer than Config.MaxBody.
	ErrBodyTooLarge = errors.New("webhook: body too large")
	// ErrBodyHash: the request_body_sha256 claim is missing or is not the
	// SHA-256 of the body.
	ErrBodyHash = errors.New("webhook: body hash mismatch")
	// ErrBody: the body cannot be read, or is not a notification of its
	// dialect.
	ErrBody = errors.New("webhook: bad notification body")
	// ErrTaskID: the taskId claim is missing or is not the body's task id.
	ErrTaskID = errors.New("webhook: task id mismatch")
	// ErrReplayed: a notification with this id was already processed
	// (Done was called for it) within Config.ReplayWindow.
	ErrReplayed = errors.New("webhook: notification already processed")
)

// StatusCode is the HTTP status the middleware answers a failed Verify with:
// 200 for ErrReplayed (already processed: relay must stop retrying), 413 for
// ErrBodyTooLarge, 400 for ErrBody, 503 for ErrKeysUnavailable, 401 for the
// rest. Receivers calling Verify themselves may use it too.
func StatusCode(err error) int {
	switch {
	case err == nil, errors.Is(err, ErrReplayed):
		return http.StatusOK
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBody):
		return http.StatusBadRequest
	case errors.Is(err, ErrKeysUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusUnauthorized
}
