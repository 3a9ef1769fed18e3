package webhook

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The wire contract of relay's notifications: the headers and JWT claims
// relay sends (internal/delivery builds its requests from these) and that
// Verify checks. It is defined here, once, for both sides.

// The headers of relay's notifications.
const (
	HeaderJWT     = "A2A-Notification-JWT"     // the JWT relay signs every notification with
	HeaderID      = "A2A-Notification-Id"      // the notification id, the same on every retry (= jti)
	HeaderToken   = "X-A2A-Notification-Token" // the push config's token (v0.x SDKs)
	HeaderTokenV1 = "A2A-Notification-Token"   // the same token (a2a-go v2)
	HeaderVersion = "A2A-Version"              // the config's dialect: 0.1, 0.3 or 1.0
	// HeaderTraceParent is the W3C trace context of the attempt, sent
	// when relay traces (OpenTelemetry): its trace is the task turn's,
	// continued from the client's own traceparent when it sent one, so
	// that a receiver can join the trace.
	HeaderTraceParent = "traceparent"
)

// QueryValidationToken is the query parameter of relay's URL ownership
// check (RELAY_WEBHOOK_VALIDATION): relay sends GET <url>?validationToken=X
// before a host's first notification, and the receiver answers 2xx with X
// as its body (Middleware does).
const QueryValidationToken = "validationToken"

// RelayClaims are the claims relay adds to the registered ones (RFC 7519).
type RelayClaims struct {
	// TaskID is the task the notification is about.
	TaskID string `json:"taskId"`
	// BodySHA256 is the hex SHA-256 of the exact body bytes.
	BodySHA256 string `json:"request_body_sha256"`
}

// Claims are the claims of a notification JWT as relay writes them: iss
// (relay's public URL), aud (the webhook URL), iat, exp, jti (the
// notification id) and RelayClaims. A flat struct, which encodes faster
// than jwt.RegisteredClaims; it implements jwt.Claims.
type Claims struct {
	Issuer    string `json:"iss"`
	Audience  string `json:"aud"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	ID        string `json:"jti"`
	RelayClaims
}

// AppendJSON appends the claims' JSON to b: the bytes json.Marshal writes
// for c, without its reflection (relay signs one set per notification).
func (c *Claims) AppendJSON(b []byte) []byte {
	b = append(b, `{"iss":`...)
	b = appendJSONString(b, c.Issuer)
	b = append(b, `,"aud":`...)
	b = appendJSONString(b, c.Audience)
	b = append(b, `,"iat":`...)
	b = strconv.AppendInt(b, c.IssuedAt, 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, c.ExpiresAt, 10)
	b = append(b, `,"jti":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"taskId":`...)
	b = appendJSONString(b, c.TaskID)
	b = append(b, `,"request_body_sha256":`...)
	b = appendJSONString(b, c.BodySHA256)
	return append(b, '}')
}

// appendJSONString appends s as json.Marshal writes it: printable ASCII
// that needs no escape as it is, anything else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// GetExpirationTime implements jwt.Claims.
func (c *Claims) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.ExpiresAt, 0)), nil
}

// GetIssuedAt implements jwt.Claims.
func (c *Claims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}

// GetNotBefore implements jwt.Claims: relay sends no nbf.
func (c *Claims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims.
func (c *Claims) GetIssuer() (string, error) { return c.Issuer, nil }

// GetSubject implements jwt.Claims: relay sends no sub.
func (c *Claims) GetSubject() (string, error) { return "", nil }

// GetAudience implements jwt.Claims.
func (c *Claims) GetAudience() (jwt.ClaimStrings, error) { return jwt.ClaimStrings{c.Audience}, nil }

// traceParent is tp when it is a well-formed W3C traceparent of version 00
// (lowercase hex: 2-32-16-2, the trace and parent ids not all zeros), else
// "".
func traceParent(tp string) string {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return ""
	}
	zero := func(s string) bool { return strings.Trim(s, "0") == "" }
	for i, c := range []byte(tp) {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ""
		}
	}
	if zero(tp[3:35]) || zero(tp[36:52]) {
		return ""
	}
	return tp
}
