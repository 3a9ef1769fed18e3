package a2a

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/encoding/protojson"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/tenant"
)

// Skill is one skill the agent card advertises.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// The protocol bindings an interface of the card names (v1.0
// protocolBinding, v0.3 transport).
const (
	BindingJSONRPC  = "JSONRPC"
	BindingHTTPJSON = "HTTP+JSON"
	BindingGRPC     = "GRPC"
)

// CardConfig is what the agent card says.
type CardConfig struct {
	Name, Description, Version string
	// URL is the JSON-RPC endpoint clients POST to.
	URL string
	// RESTURL, when set, is the base URL of the HTTP+JSON binding as a
	// v1.0 client uses it (it appends /message:send and the other
	// routes); RESTV03URL is the same binding's URL for a v0.3 client,
	// which appends /v1/message:send (for relay, RESTURL without its /v1).
	RESTURL, RESTV03URL string
	// GRPCURL, when set, is where the gRPC binding listens, as host:port.
	GRPCURL string
	// JWKSURL, when set, goes in the jku of the card's signatures.
	JWKSURL string
	Skills  []Skill
	// ExtendedDescription and ExtendedSkills make up the extended card;
	// HasExtended turns it on.
	HasExtended         bool
	ExtendedDescription string
	ExtendedSkills      []Skill
	// ExtendedFor replaces the extended card for some callers, keyed by
	// the principal they act for (tenant.Owner): its description, when
	// set, replaces ExtendedDescription, and its skills come after
	// ExtendedSkills. Only with HasExtended.
	ExtendedFor map[string]ExtendedCard
	// MaxAge is the Cache-Control max-age of the public card; zero serves
	// max-age=0: caches revalidate with the ETag every time.
	MaxAge    time.Duration
	Streaming bool
	// Security lists how clients authenticate (any one will do); empty
	// declares no authentication.
	Security []SecurityScheme
}

// ExtendedCard is what one caller's extended card has of its own.
type ExtendedCard struct {
	Description string
	Skills      []Skill
}

// SecurityScheme is one way clients authenticate, as the card declares it.
type SecurityScheme struct {
	// Name keys the scheme in securitySchemes.
	Name string
	// Type is "apiKey" (In and HeaderName say where) or "http" (Scheme,
	// e.g. "bearer", and BearerFormat, e.g. "JWT").
	Type, In, HeaderName, Scheme, BearerFormat, Description string
}

// wire renders a scheme for both dialects in one object: the v0.3 fields
// (type, in, name, scheme, bearerFormat) and the v1.0 oneof member
// (apiKeySecurityScheme or httpAuthSecurityScheme). Empty strings are left
// out (see Card on default values).
func (s SecurityScheme) wire() map[string]any {
	out := map[string]any{"type": s.Type}
	v10 := map[string]any{}
	if s.Description != "" {
		out["description"], v10["description"] = s.Description, s.Description
	}
	switch s.Type {
	case "apiKey":
		out["in"], out["name"] = s.In, s.HeaderName
		v10["location"], v10["name"] = s.In, s.HeaderName
		out["apiKeySecurityScheme"] = v10
	default:
		out["scheme"], v10["scheme"] = s.Scheme, s.Scheme
		if s.BearerFormat != "" {
			out["bearerFormat"], v10["bearerFormat"] = s.BearerFormat, s.BearerFormat
		}
		out["httpAuthSecurityScheme"] = v10
	}
	return out
}

// CardSigner signs the card: a JWS over a payload, with the key its JWKS
// publishes (*auth.Keys is one).
type CardSigner interface {
	// SignCard returns the base64url protected header and signature of a
	// JWS over payload with the current key, whose kid it names.
	SignCard(payload []byte, jku string) (protected, signature, kid string, err error)
	// CurrentKID is the kid SignCard signs with now.
	CurrentKID() string
}

// CardDeps are what a Card calls.
type CardDeps struct {
	// Signer signs the cards; nil serves them unsigned.
	Signer CardSigner
}

// Card is the agent card: the public one and the extended ones, rendered
// and signed once per signing key.
//
// Signing (A2A §8.4): each card carries in "signatures" two JWSs, with the
// same key. The first covers the RFC 8785 (JCS) canonical form of the
// whole card without "signatures", as a client that verifies the JSON it
// received computes it. The second covers the JCS form of the card as the
// v1.0 AgentCard message carries it (v10Form): a client that reads the
// card into that message (the extended card over gRPC, an SDK built on the
// proto types) drops the v0.3 members, so the first payload is not one it
// can rebuild. A verifier needs one signature that verifies (§8.4.3); a
// card stripped of its v0.3 members still verifies, with the second, and
// says to a v1.0 client all the signed card says. The card holds no value
// a verifier's removal of Protocol Buffer defaults (§8.4.1) would strip
// (no empty string, list or map, no false optional boolean, among the
// fields the v1.0 proto knows), so the canonical forms a client computes
// are the ones signed whether or not it strips defaults. When the
// signer's key rotates, the next request renders and signs again, so the
// signature names a key the JWKS publishes; the previous signature still
// verifies during the rotated-out key's grace. Signatures are
// deterministic (RFC 6979 ECDSA, Ed25519, PKCS#1 v1.5), so instances that
// share the keys serve the same bytes and the same ETag.
type Card struct {
	cfg      CardConfig
	signer   CardSigner
	public   map[string]any
	extended map[string]map[string]any // by principal; "" for every other caller; nil: none

	mu       sync.Mutex // serializes rendering
	rendered atomic.Pointer[renderedCard]
}

// renderedCard is the cards as served, signed with one key.
type renderedCard struct {
	kid      string
	public   []byte
	etag     string
	extended map[string]json.RawMessage
}

// NewCard returns an unsigned card (NewSignedCard without a signer).
func NewCard(cfg CardConfig) (*Card, error) { return NewSignedCard(CardDeps{}, cfg) }

// NewSignedCard renders the card. One document carries the v0.3 fields
// (url, preferredTransport, additionalInterfaces, protocolVersion) and the
// v1.0 ones (supportedInterfaces with protocolVersion "1.0"), so that
// every client finds its dialect.
func NewSignedCard(deps CardDeps, cfg CardConfig) (*Card, error) {
	if cfg.MaxAge < 0 {
		return nil, fmt.Errorf("a2a: CardConfig.MaxAge %v is negative", cfg.MaxAge)
	}
	if len(cfg.ExtendedFor) > 0 && !cfg.HasExtended {
		return nil, fmt.Errorf("a2a: CardConfig.ExtendedFor needs HasExtended")
	}
	c := &Card{cfg: cfg, signer: deps.Signer}
	c.public = c.document(cfg.Description, cfg.Skills)
	if cfg.HasExtended {
		base := append(append([]Skill{}, cfg.Skills...), cfg.ExtendedSkills...)
		desc := cmp.Or(cfg.ExtendedDescription, cfg.Description)
		c.extended = map[string]map[string]any{"": c.document(desc, base)}
		for who, ext := range cfg.ExtendedFor {
			c.extended[who] = c.document(cmp.Or(ext.Description, desc), append(append([]Skill{}, base...), ext.Skills...))
		}
	}
	if _, err := c.render(); err != nil {
		return nil, err
	}
	return c, nil
}

// interfaces are the card's v1.0 supportedInterfaces and v0.3
// additionalInterfaces: JSON-RPC first (the preferred one), then
// HTTP+JSON and gRPC when they are served.
func (c *Card) interfaces() (v10, v03 []map[string]string) {
	add := func(binding, url, v03URL string) {
		v10 = append(v10, map[string]string{"url": url, "protocolBinding": binding, "protocolVersion": "1.0"})
		v03 = append(v03, map[string]string{"url": v03URL, "transport": binding})
	}
	add(BindingJSONRPC, c.cfg.URL, c.cfg.URL)
	if c.cfg.RESTURL != "" {
		add(BindingHTTPJSON, c.cfg.RESTURL, cmp.Or(c.cfg.RESTV03URL, c.cfg.RESTURL))
	}
	if c.cfg.GRPCURL != "" {
		add(BindingGRPC, c.cfg.GRPCURL, c.cfg.GRPCURL)
	}
	return v10, v03
}

func (c *Card) document(description string, skills []Skill) map[string]any {
	if skills == nil {
		skills = []Skill{}
	}
	v10, v03 := c.interfaces()
	doc := map[string]any{
		"name":                              c.cfg.Name,
		"description":                       description,
		"version":                           c.cfg.Version,
		"protocolVersion":                   "0.3.0",
		"url":                               c.cfg.URL,
		"preferredTransport":                BindingJSONRPC,
		"additionalInterfaces":              v03,
		"supportedInterfaces":               v10,
		"capabilities":                      c.capabilities(),
		"supportsAuthenticatedExtendedCard": c.cfg.HasExtended,
		"defaultInputModes":                 []string{"text/plain", "application/json"},
		"defaultOutputModes":                []string{"text/plain", "application/json"},
		"skills":                            skills,
	}
	if len(c.cfg.Security) > 0 {
		schemes := map[string]any{}
		var v03, v10 []any
		for _, s := range c.cfg.Security {
			schemes[s.Name] = s.wire()
			v03 = append(v03, map[string][]string{s.Name: {}})
			// A StringList with no scopes is {} (its empty list is a
			// default value, which §8.4.1 leaves out).
			v10 = append(v10, map[string]any{"schemes": map[string]any{s.Name: map[string]any{}}})
		}
		doc["securitySchemes"], doc["security"], doc["securityRequirements"] = schemes, v03, v10
	}
	return doc
}

// capabilities are the card's capabilities. The v1.0 ones are optional
// booleans, set only when true: an explicit false is a default value, which
// ProtoJSON keeps (the field is present) but a verifier that strips
// defaults (§8.4.3) drops, so the two would canonicalize it apart.
func (c *Card) capabilities() map[string]any {
	caps := map[string]any{"pushNotifications": true, "stateTransitionHistory": false}
	if c.cfg.Streaming {
		caps["streaming"] = true
	}
	if c.cfg.HasExtended {
		caps["extendedAgentCard"] = true
	}
	caps["extensions"] = []map[string]any{{"uri": WebhookExtensionURI,
		"description": "Webhook options for push configs: event filter, rate limit, concurrency cap, Standard Webhooks signatures."}}
	return caps
}

// current returns the cards signed with the signer's current key,
// rendering them again when that key changed.
func (c *Card) current() (*renderedCard, error) {
	r := c.rendered.Load()
	if c.signer == nil || r.kid == c.signer.CurrentKID() {
		return r, nil
	}
	return c.render()
}

// render renders and signs the cards with the current key.
func (c *Card) render() (*renderedCard, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.rendered.Load(); r != nil && (c.signer == nil || r.kid == c.signer.CurrentKID()) {
		return r, nil
	}
	r := &renderedCard{extended: map[string]json.RawMessage{}}
	var err error
	if r.public, r.kid, err = c.sign(c.public); err != nil {
		return nil, err
	}
	r.etag = ETag(r.public)
	for who, doc := range c.extended {
		if r.extended[who], _, err = c.sign(doc); err != nil {
			return nil, err
		}
	}
	c.rendered.Store(r)
	return r, nil
}

// sign encodes doc with its signature (A2A §8.4): a JWS over the JCS
// canonical form of doc.
func (c *Card) sign(doc map[string]any) (out []byte, kid string, err error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, "", fmt.Errorf("a2a: agent card: %w", err)
	}
	if c.signer == nil {
		return body, "", nil
	}
	forms, err := signedForms(body)
	if err != nil {
		return nil, "", err
	}
	sigs := make([]map[string]string, 0, len(forms))
	for i, payload := range forms {
		protected, signature, k, err := c.signer.SignCard(payload, c.cfg.JWKSURL)
		if err != nil {
			return nil, "", fmt.Errorf("a2a: agent card: %w", err)
		}
		if i == 0 {
			// A rotation between two signings leaves kid behind the
			// current key, so the next request signs again.
			kid = k
		}
		sigs = append(sigs, map[string]string{"protected": protected, "signature": signature})
	}
	signed := maps.Clone(doc)
	signed["signatures"] = sigs
	if out, err = json.Marshal(signed); err != nil {
		return nil, "", fmt.Errorf("a2a: agent card: %w", err)
	}
	return out, kid, nil
}

// signedForms are the payloads the card's signatures cover, each the RFC
// 8785 form of one reading of body (the card without "signatures"): the
// whole document, as JSON clients verify it; then, when it differs, the
// document as the v1.0 AgentCard message carries it (see v10Form).
func signedForms(body []byte) ([][]byte, error) {
	full, err := jcs.Transform(body)
	if err != nil {
		return nil, fmt.Errorf("a2a: agent card: canonical form: %w", err)
	}
	v10, err := v10Form(body)
	if err != nil {
		return nil, err
	}
	if v10, err = jcs.Transform(v10); err != nil {
		return nil, fmt.Errorf("a2a: agent card: canonical v1.0 form: %w", err)
	}
	if bytes.Equal(v10, full) {
		return [][]byte{full}, nil
	}
	return [][]byte{full, v10}, nil
}

// v10Form is the card as a client that reads it into the v1.0 AgentCard
// message (gRPC's GetExtendedAgentCard, an SDK built on the proto types)
// encodes it again for verification: ProtoJSON, without the members the
// message does not know (the v0.3 ones: url, preferredTransport,
// additionalInterfaces, protocolVersion, security, ...), and without the
// default values ProtoJSON leaves out (§8.4.1).
func v10Form(body []byte) ([]byte, error) {
	var card a2apb.AgentCard
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, &card); err != nil {
		return nil, fmt.Errorf("a2a: agent card as an AgentCard message: %w", err)
	}
	card.Signatures = nil
	out, err := protojson.Marshal(&card)
	if err != nil {
		return nil, fmt.Errorf("a2a: agent card as an AgentCard message: %w", err)
	}
	return out, nil
}

// HasExtended reports whether an extended card is configured.
func (c *Card) HasExtended() bool { return c.extended != nil }

// Extended returns the extended card of the caller ctx acts for (its own
// when CardConfig.ExtendedFor has one, else the common one), signed, the
// same document for every dialect; nil when none is configured.
func (c *Card) Extended(ctx context.Context) (json.RawMessage, error) {
	if c.extended == nil {
		return nil, nil
	}
	r, err := c.current()
	if err != nil {
		return nil, err
	}
	if doc, ok := r.extended[tenant.Owner(ctx)]; ok {
		return doc, nil
	}
	return r.extended[""], nil
}

// Public returns the public card as it is served.
func (c *Card) Public() ([]byte, error) {
	r, err := c.current()
	if err != nil {
		return nil, err
	}
	return r.public, nil
}

// Served is the public card as it is served at
// /.well-known/agent-card.json (the HTTP edge, rest.ServeCard, answers
// with it): its bytes, their ETag, and how long a client may cache it
// (CardConfig.MaxAge).
func (c *Card) Served() (body []byte, etag string, maxAge time.Duration, err error) {
	r, err := c.current()
	if err != nil {
		return nil, "", 0, err
	}
	return r.public, r.etag, c.cfg.MaxAge, nil
}

// ETag is the entity tag of a card as served: a hash of its bytes.
func ETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// ETagMatches reports whether an If-None-Match header names etag (RFC 9110
// §13.1.2: a list, weak comparison, or *).
func ETagMatches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}
