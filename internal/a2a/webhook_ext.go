package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// WebhookExtensionURI names relay's A2A extension for webhook options
// (docs/webhook-extension.md). A push config carries the extension's params
// in its metadata, under this URI:
//
//	{"url": "...", "metadata": {"<WebhookExtensionURI>": {"events": "final"}}}
//
// A send's params metadata may carry them too, for the config given inline
// with the send (the only way over gRPC, whose push config has no metadata).
// A push config without them is plain A2A: every event, the operator's
// limits, the A2A JWT alone.
const WebhookExtensionURI = "https://github.com/a2arelay/relay/blob/main/docs/webhook-extension.md"

// Event filters a push config may ask for (WebhookOptions.Events).
const (
	// EventsAll delivers every committed event (the default).
	EventsAll = "all"
	// EventsFinal delivers only events that put the task in a final or
	// interrupted state (completed, failed, canceled, rejected,
	// input-required, auth-required).
	EventsFinal = "final"
	// EventsNoArtifactChunks delivers every event but artifact updates that
	// append to an artifact (chunks after the first).
	EventsNoArtifactChunks = "no-artifact-chunks"
)

// Standard Webhooks signing schemes (SigningOptions.Scheme).
const (
	// SchemeV1 signs with HMAC-SHA256 under the config's secret.
	SchemeV1 = "v1"
	// SchemeV1a signs with ed25519 under relay's published keys.
	SchemeV1a = "v1a"
)

// Bounds on the extension's params.
const (
	MaxWebhookRateLimit     = 10000 // deliveries per second
	MaxWebhookMaxConcurrent = 1000
	minSigningSecretBytes   = 24
	maxSigningSecretBytes   = 64
	// SigningSecretPrefix starts a Standard Webhooks secret.
	SigningSecretPrefix = "whsec_"
)

// WebhookOptions are what a push config asks of relay's webhook
// extension. The zero value asks nothing: plain A2A.
type WebhookOptions struct {
	// Events is one of EventsAll (or ""), EventsFinal, EventsNoArtifactChunks.
	Events string `json:"events,omitempty"`
	// RateLimit caps deliveries per second to the config's URL; 0 leaves
	// the operator's default.
	RateLimit float64 `json:"rateLimit,omitempty"`
	// MaxConcurrent caps deliveries in flight to the config's URL; 0
	// leaves the operator's default.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// Signing asks for Standard Webhooks headers besides the A2A JWT.
	Signing *SigningOptions `json:"standardWebhooks,omitempty"`
}

// SigningOptions ask for Standard Webhooks signatures.
type SigningOptions struct {
	// Scheme is SchemeV1 or SchemeV1a.
	Scheme string `json:"scheme"`
	// Secret is the v1 secret, "whsec_" + base64 of 24 to 64 bytes. Sealed
	// at rest like the token, masked in answers.
	Secret string `json:"secret,omitempty"`
}

// IsZero reports whether o asks for nothing.
func (o *WebhookOptions) IsZero() bool {
	return o == nil || (o.Events == "" && o.RateLimit == 0 && o.MaxConcurrent == 0 && o.Signing == nil)
}

// webhookOptionsFrom reads the extension's params from a metadata object
// (a push config's or a send's): nil when absent or null.
func webhookOptionsFrom(field string, metadata json.RawMessage) (*WebhookOptions, error) {
	if len(metadata) == 0 || bytes.Equal(bytes.TrimSpace(metadata), []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(metadata, &m); err != nil {
		return nil, &FieldError{Field: field, Problem: "is not a JSON object"}
	}
	raw, ok := m[WebhookExtensionURI]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var o WebhookOptions
	if err := dec.Decode(&o); err != nil {
		return nil, &FieldError{Field: field + "[" + WebhookExtensionURI + "]", Problem: "is not valid: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	return &o, nil
}

// webhookMetadata is the metadata object an answer shows for o (nil for
// none), with the secret masked.
func webhookMetadata(o *WebhookOptions) map[string]any {
	if o.IsZero() {
		return nil
	}
	shown := *o
	if s := o.Signing; s != nil {
		ms := *s
		if ms.Secret != "" {
			ms.Secret = maskSecret(ms.Secret)
		}
		shown.Signing = &ms
	}
	return map[string]any{WebhookExtensionURI: shown}
}

func maskSecret(s string) string {
	if len(s) <= 4 {
		return "****"
	}
	return "****" + s[len(s)-4:]
}

// Validate checks o's fields, named under field.
func (o *WebhookOptions) Validate(field string) error {
	if o == nil {
		return nil
	}
	switch o.Events {
	case "", EventsAll, EventsFinal, EventsNoArtifactChunks:
	default:
		return &FieldError{Field: field + ".events", Problem: fmt.Sprintf("must be %q, %q or %q", EventsAll, EventsFinal, EventsNoArtifactChunks)}
	}
	if o.RateLimit < 0 || o.RateLimit > MaxWebhookRateLimit || math.IsNaN(o.RateLimit) {
		return &FieldError{Field: field + ".rateLimit", Problem: fmt.Sprintf("must be between 0 and %d", MaxWebhookRateLimit)}
	}
	if o.MaxConcurrent < 0 || o.MaxConcurrent > MaxWebhookMaxConcurrent {
		return &FieldError{Field: field + ".maxConcurrent", Problem: fmt.Sprintf("must be between 0 and %d", MaxWebhookMaxConcurrent)}
	}
	if s := o.Signing; s != nil {
		switch s.Scheme {
		case SchemeV1:
			if err := checkSigningSecret(field+".standardWebhooks.secret", s.Secret); err != nil {
				return err
			}
		case SchemeV1a:
			if s.Secret != "" {
				return &FieldError{Field: field + ".standardWebhooks.secret", Problem: "must be empty for scheme v1a (relay signs with its published keys)"}
			}
		default:
			return &FieldError{Field: field + ".standardWebhooks.scheme", Problem: fmt.Sprintf("must be %q or %q", SchemeV1, SchemeV1a)}
		}
	}
	return nil
}

func checkSigningSecret(field, s string) error {
	b64, ok := strings.CutPrefix(s, SigningSecretPrefix)
	if !ok {
		return &FieldError{Field: field, Problem: "must start with " + SigningSecretPrefix}
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return &FieldError{Field: field, Problem: "must be " + SigningSecretPrefix + " and standard base64"}
	}
	if len(b) < minSigningSecretBytes || len(b) > maxSigningSecretBytes {
		return &FieldError{Field: field, Problem: fmt.Sprintf("must hold %d to %d bytes", minSigningSecretBytes, maxSigningSecretBytes)}
	}
	return nil
}

// SigningKey returns the v1 secret's key bytes (nil when o has none).
func (o *WebhookOptions) SigningKey() []byte {
	if o == nil || o.Signing == nil || o.Signing.Secret == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(o.Signing.Secret, SigningSecretPrefix))
	if err != nil {
		return nil
	}
	return b
}

// encodeWebhookMetadata is webhookMetadata as JSON (nil for none).
func encodeWebhookMetadata(o *WebhookOptions) json.RawMessage {
	m := webhookMetadata(o)
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m) // (strings and numbers: cannot fail)
	return b
}

// takeWebhookOptions gives a config sent inline the extension's params
// from the send's own metadata, unless the config carries its own, and
// takes them out of the send's metadata either way: they are the config's
// (a v1 secret among them is sealed with it), and the send's metadata
// becomes the task's, which answers, webhooks and agents show in clear.
func (p *SendParams) takeWebhookOptions() error {
	if p.PushConfig != nil && p.PushConfig.Options == nil {
		o, err := webhookOptionsFrom("metadata", p.Metadata)
		if err != nil {
			return err
		}
		p.PushConfig.Options = o
	}
	p.Metadata = withoutWebhookOptions(p.Metadata)
	return nil
}

// withoutWebhookOptions is a metadata object without the extension's
// params (nil when nothing else is left; as it is when it has none).
func withoutWebhookOptions(metadata json.RawMessage) json.RawMessage {
	if len(metadata) == 0 || (!bytes.Contains(metadata, []byte(WebhookExtensionURI)) && !bytes.Contains(metadata, []byte(`\`))) {
		return metadata // (the key can only be there spelled as it is, or escaped)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(metadata, &m); err != nil {
		return metadata
	}
	if _, ok := m[WebhookExtensionURI]; !ok {
		return metadata
	}
	delete(m, WebhookExtensionURI)
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return metadata
	}
	return b
}

// Event classes for the extension's event filters (Event.FilterClass):
// one byte each, as the commit script matches them.
const (
	// EventClassFinal: a task, or a status update, in a final or
	// interrupted state (completed, failed, canceled, rejected,
	// input-required, auth-required).
	EventClassFinal byte = 'f'
	// EventClassChunk: an artifact update that appends to an artifact
	// (append: true, its last chunk included).
	EventClassChunk byte = 'c'
	// EventClassOther: every other event that notifies (a task or status
	// update in another state, an artifact update that starts an artifact).
	EventClassOther byte = 'o'
)

// FilterClass is ev's class for the webhook extension's event filters.
func (ev Event) FilterClass() byte {
	var st *TaskStatus
	switch ev.Kind {
	case EventArtifact:
		if ev.Append {
			return EventClassChunk
		}
		return EventClassOther
	case EventTask:
		if ev.Task != nil {
			st = &ev.Task.Status
		}
	case EventStatus:
		st = ev.Status
	}
	if st != nil && (st.State.Terminal() || st.State.Interrupted()) {
		return EventClassFinal
	}
	return EventClassOther
}

// Accept is the event classes a config with options o takes ("": every
// event, no filter).
func (o *WebhookOptions) Accept() string {
	if o == nil {
		return ""
	}
	switch o.Events {
	case EventsFinal:
		return string(EventClassFinal)
	case EventsNoArtifactChunks:
		return string([]byte{EventClassFinal, EventClassOther})
	}
	return ""
}

// Takes reports whether a config whose Accept is accept takes an event of
// class c.
func Takes(accept string, c byte) bool {
	return accept == "" || strings.IndexByte(accept, c) >= 0
}
