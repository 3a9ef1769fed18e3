package a2a

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Skill is one skill the agent card advertises.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// CardConfig is what the agent card says.
type CardConfig struct {
	Name, Description, Version string
	// URL is the JSON-RPC endpoint clients POST to.
	URL    string
	Skills []Skill
	// ExtendedDescription and ExtendedSkills make up the extended card;
	// HasExtended turns it on.
	HasExtended         bool
	ExtendedDescription string
	ExtendedSkills      []Skill
	// MaxAge is the Cache-Control max-age of the card (default 5m).
	MaxAge    time.Duration
	Streaming bool
	// Security lists how clients authenticate (any one will do); empty
	// declares no authentication.
	Security []SecurityScheme
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
// (apiKeySecurityScheme or httpAuthSecurityScheme).
func (s SecurityScheme) wire() map[string]any {
	out := map[string]any{"type": s.Type}
	if s.Description != "" {
		out["description"] = s.Description
	}
	switch s.Type {
	case "apiKey":
		out["in"], out["name"] = s.In, s.HeaderName
		out["apiKeySecurityScheme"] = map[string]any{"location": s.In, "name": s.HeaderName, "description": s.Description}
	default:
		out["scheme"] = s.Scheme
		if s.BearerFormat != "" {
			out["bearerFormat"] = s.BearerFormat
		}
		out["httpAuthSecurityScheme"] = map[string]any{"scheme": s.Scheme, "bearerFormat": s.BearerFormat, "description": s.Description}
	}
	return out
}

// Card is the agent card, rendered once: the public one and the extended one.
type Card struct {
	cfg      CardConfig
	public   []byte
	etag     string
	extended map[string]any
}

// NewCard renders the card. One document carries the v0.3 fields (url,
// preferredTransport, protocolVersion) and the v1.0 ones (supportedInterfaces
// with protocolVersion "1.0"), so that every client finds its dialect.
func NewCard(cfg CardConfig) (*Card, error) {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 5 * time.Minute
	}
	c := &Card{cfg: cfg}
	pub := c.document(cfg.Description, cfg.Skills)
	b, err := json.Marshal(pub)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	c.public, c.etag = b, `"`+hex.EncodeToString(sum[:8])+`"`
	if cfg.HasExtended {
		desc := cmp.Or(cfg.ExtendedDescription, cfg.Description)
		c.extended = c.document(desc, append(append([]Skill{}, cfg.Skills...), cfg.ExtendedSkills...))
	}
	return c, nil
}

func (c *Card) document(description string, skills []Skill) map[string]any {
	if skills == nil {
		skills = []Skill{}
	}
	doc := map[string]any{
		"name":               c.cfg.Name,
		"description":        description,
		"version":            c.cfg.Version,
		"protocolVersion":    "0.3.0",
		"url":                c.cfg.URL,
		"preferredTransport": "JSONRPC",
		"supportedInterfaces": []map[string]string{
			{"url": c.cfg.URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
		},
		"capabilities": map[string]any{
			"streaming":              c.cfg.Streaming,
			"pushNotifications":      true,
			"stateTransitionHistory": false,
			"extendedAgentCard":      c.cfg.HasExtended,
		},
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
			v10 = append(v10, map[string]any{"schemes": map[string]any{s.Name: map[string][]string{"list": {}}}})
		}
		doc["securitySchemes"], doc["security"], doc["securityRequirements"] = schemes, v03, v10
	}
	return doc
}

// HasExtended reports whether an extended card is configured.
func (c *Card) HasExtended() bool { return c.extended != nil }

// Extended returns the extended card (the same document for every dialect).
func (c *Card) Extended(Dialect) any { return c.extended }

// Serve is the fiber handler of /.well-known/agent-card.json and agent.json.
func (c *Card) Serve(ctx *fiber.Ctx) error {
	ctx.Set(fiber.HeaderCacheControl, "public, max-age="+strconv.Itoa(int(c.cfg.MaxAge.Seconds())))
	ctx.Set(fiber.HeaderETag, c.etag)
	if ctx.Get(fiber.HeaderIfNoneMatch) == c.etag {
		return ctx.SendStatus(fiber.StatusNotModified)
	}
	ctx.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return ctx.Send(c.public)
}
