package a2a

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what a client may have relay store. Every dialect and every
// path that stores a push config or an identifier checks them, through
// PushConfig.Validate and SendParams.Validate, so that a value relay could
// not send on (a token with a CR in it, a URL with a password) is refused
// when it is saved, with the field named, instead of failing at send time.
const (
	// MaxIDBytes bounds task, context, message and push config ids.
	MaxIDBytes = 256
	// MaxURLBytes bounds a webhook URL.
	MaxURLBytes = 2048
	// MaxTokenBytes bounds a push config's token, sent twice as a header
	// (X-A2A-Notification-Token and A2A-Notification-Token).
	MaxTokenBytes = 2048
	// MaxCredentialsBytes bounds a push config's credentials, sent in the
	// Authorization header: room for a large OAuth access token.
	MaxCredentialsBytes = 4096
	// MaxSchemeBytes bounds an authentication scheme ("Bearer", "Basic").
	MaxSchemeBytes = 64
	// MaxSchemes bounds the schemes of a push config (relay uses the first).
	MaxSchemes = 8
)

// FieldError is the core's error for one field of a request that relay
// refuses: too long, holding a control character, or of the wrong form. It
// is safe to show a client: it never quotes the value. Each binding maps it
// to its invalid-argument answer (JSON-RPC: -32602, the field in data).
type FieldError struct {
	// Field names the field in the canonical model ("message.messageId",
	// "pushNotificationConfig.token"); a binding may rename it to its
	// dialect's spelling before answering.
	Field string
	// Limit is the length limit in bytes the field exceeds (0: its length
	// is not the problem).
	Limit int
	// Problem says what is wrong, to follow the field's name.
	Problem string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Problem }

func tooLong(field string, limit int) *FieldError {
	return &FieldError{Field: field, Limit: limit, Problem: fmt.Sprintf("is longer than %d bytes", limit)}
}

// checkText refuses a value over limit bytes or holding a control character
// (C0, DEL or C1: CR, LF and NUL among them). Invalid UTF-8 is not its
// concern.
func checkText(field, v string, limit int) error {
	if len(v) > limit {
		return tooLong(field, limit)
	}
	for i, r := range v {
		if r != utf8.RuneError && unicode.IsControl(r) {
			return &FieldError{Field: field, Problem: fmt.Sprintf("contains a control character (U+%04X) at byte %d", r, i)}
		}
	}
	return nil
}

// ValidateID checks an identifier a client chose (task, context, message,
// push config): at most MaxIDBytes bytes, no control characters. An empty
// id passes: whether one is required is the caller's rule.
func ValidateID(field, id string) error { return checkText(field, id, MaxIDBytes) }

// Validate checks the fields of a push config a client wants stored: ids,
// the URL (absolute http or https, without user:password@), token,
// credentials and schemes. Fields are named as in a v0.3
// PushNotificationConfig, under "pushNotificationConfig.".
func (c PushConfig) Validate() error {
	const prefix = "pushNotificationConfig."
	if err := ValidateID(prefix+"id", c.ID); err != nil {
		return err
	}
	if err := ValidateID(prefix+"taskId", c.TaskID); err != nil {
		return err
	}
	if err := ValidatePushURL(prefix+"url", c.URL); err != nil {
		return err
	}
	if err := checkText(prefix+"token", c.Token, MaxTokenBytes); err != nil {
		return err
	}
	if err := c.Options.Validate(prefix + "metadata[" + WebhookExtensionURI + "]"); err != nil {
		return err
	}
	a := c.Auth
	if a == nil {
		return nil
	}
	if err := checkText(prefix+"authentication.credentials", a.Credentials, MaxCredentialsBytes); err != nil {
		return err
	}
	if len(a.Schemes) > MaxSchemes {
		return &FieldError{Field: prefix + "authentication.schemes", Problem: fmt.Sprintf("has more than %d entries", MaxSchemes)}
	}
	for i, s := range a.Schemes {
		if err := checkScheme(fmt.Sprintf("%sauthentication.schemes[%d]", prefix, i), s); err != nil {
			return err
		}
	}
	return nil
}

// checkScheme refuses a scheme that cannot stand before the credentials in
// an Authorization header: an HTTP token (RFC 9110 §5.6.2) of at most
// MaxSchemeBytes bytes. Empty means Bearer.
func checkScheme(field, s string) error {
	if len(s) > MaxSchemeBytes {
		return tooLong(field, MaxSchemeBytes)
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return &FieldError{Field: field, Problem: fmt.Sprintf("must be an HTTP auth scheme such as Bearer or Basic (letters, digits and !#$%%&'*+-.^_`|~), byte %d is not", i)}
		}
	}
	return nil
}

func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// ValidatePushURL checks a webhook URL: at most MaxURLBytes bytes, an
// absolute http or https URL, without userinfo (credentials in a URL would
// be stored and shown in plain text, logged with every attempt and sent to
// the receiver in the JWT's aud; they belong in authentication). The error
// never quotes the URL.
func ValidatePushURL(field, raw string) error {
	if len(raw) > MaxURLBytes {
		return tooLong(field, MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &FieldError{Field: field, Problem: "must be an absolute http or https URL"}
	}
	if u.User != nil {
		return &FieldError{Field: field, Problem: "must not carry user:password@ (give credentials in authentication.credentials)"}
	}
	return nil
}

// Validate checks the identifiers of a send and its inline push config.
// Fields are named as in v0.3 MessageSendParams; ContextID and TaskID are
// checked as "contextId" and "taskId" when the message does not carry them
// (v0.1's sessionId and client-chosen id).
func (p SendParams) Validate() error {
	m := p.Message
	for _, f := range []struct{ name, v string }{
		{"message.messageId", m.MessageID}, {"message.contextId", m.ContextID}, {"message.taskId", m.TaskID},
		{"contextId", p.ContextID}, {"taskId", p.TaskID},
	} {
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
	}
	for i, id := range m.ReferenceTaskIDs {
		if err := ValidateID(fmt.Sprintf("message.referenceTaskIds[%d]", i), id); err != nil {
			return err
		}
	}
	if p.PushConfig != nil {
		return p.PushConfig.Validate()
	}
	return nil
}

// MessageLimits bound one message a client sends: its parts and its size.
// Zero fields do not limit.
type MessageLimits struct {
	// MaxParts is the most parts a message may have.
	MaxParts int
	// MaxBytes is the most bytes a message may take, measured as relay
	// stores it (its canonical JSON encoding: parts, metadata and ids).
	MaxBytes int
}

// Check refuses a message over the limits with a *FieldError naming
// message.parts or message. It returns the message's size in bytes as
// relay stores it.
func (l MessageLimits) Check(m Message) (int, error) {
	if l.MaxParts > 0 && len(m.Parts) > l.MaxParts {
		return 0, &FieldError{Field: "message.parts", Problem: fmt.Sprintf("has more than %d entries", l.MaxParts)}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("a2a: encode message: %w", err)
	}
	if l.MaxBytes > 0 && len(b) > l.MaxBytes {
		return 0, tooLong("message", l.MaxBytes)
	}
	return len(b), nil
}
