package auth

// Client authentication: who may call relay's A2A endpoint. A client
// presents an API key (Authorization: Bearer <key>, or the API key header)
// or a JWT from a configured issuer (Authorization: Bearer <jwt>); either
// maps to a Principal, which owns the client's tasks. API keys are in
// apikeys.go, JWT verification in clientjwt.go, the issuer's JWKS in
// remotejwks.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Errors of Authenticate; match them with errors.Is. They are wrapped with
// a detail for logs, which never contains the presented secret.
var (
	// ErrNoCredentials: the request carries no credential relay reads (no
	// Authorization: Bearer, no API key header). Answer 401 with a
	// challenge.
	ErrNoCredentials = errors.New("no client credentials")
	// ErrBadCredentials: a credential was presented and refused (unknown
	// API key, invalid or expired JWT, malformed header).
	ErrBadCredentials = errors.New("bad client credentials")
)

// Kinds of Principal.
const (
	KindAPIKey = "apikey"
	KindJWT    = "jwt"
)

// DefaultAPIKeyHeader is ClientConfig.APIKeyHeader's default.
const DefaultAPIKeyHeader = "X-API-Key"

// Limits of client authentication.
const (
	// maxCredentialLen bounds a presented API key or JWT, before any work.
	maxCredentialLen = 8 << 10
	// defaultClientHTTPTimeout is the timeout of the default JWKS client.
	defaultClientHTTPTimeout = 5 * time.Second
)

// headerNameRe is what APIKeyHeader may be (the config package checks the same).
var headerNameRe = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// Principal is an authenticated client: tasks belong to it.
type Principal struct {
	ID   string // "key:<name>" for an API key, "jwt:<iss>|<sub>" for a JWT
	Kind string // KindAPIKey or KindJWT
}

// ClientConfig configures Clients. The zero value configures no credential
// (Enabled is false).
type ClientConfig struct {
	// APIKeys are "<name>:sha256:<64 lowercase hex digits>", the SHA-256 of
	// each key as HashAPIKey prints it (never the key itself). The name,
	// [A-Za-z0-9._-]{1,64}, is the principal: "key:<name>". Names and
	// hashes must be unique.
	APIKeys []string
	// APIKeyHeader is the header that may carry an API key besides
	// Authorization: Bearer (default DefaultAPIKeyHeader).
	APIKeyHeader string
	// JWT authentication is on when JWTJWKSURL or JWTKeyFile is set (not
	// both); JWTIssuer and JWTAudience are then required, and are the iss
	// and an aud every client JWT must carry.
	JWTIssuer   string
	JWTAudience string
	// JWTJWKSURL is the issuer's JWKS: https, or http to a loopback host.
	// It is fetched on first use and refreshed by Run; keys are picked by
	// kid.
	JWTJWKSURL string
	// JWTKeyFile is a PEM public key instead: PKIX "PUBLIC KEY", PKCS#1
	// "RSA PUBLIC KEY" or a "CERTIFICATE" (only its key is used; its
	// validity and chain are not checked). Every token is verified with it,
	// whatever its kid. It is read once, by NewClients.
	JWTKeyFile string
	// HTTP fetches the JWKS (default: a client with a 5 s timeout that
	// follows at most 3 redirects, to https or loopback http only).
	HTTP *http.Client
	// Now is the clock of token expiry and of JWKS refetch limits
	// (default time.Now).
	Now func() time.Time
	// Logger receives JWKS fetch problems (default slog.Default()).
	Logger *slog.Logger
}

// Clients authenticates the clients of the A2A endpoint. It is safe for
// concurrent use. It does not log refused credentials: the caller does,
// with the returned error, and should rate-limit that log.
type Clients struct {
	header  string       // API key header
	apiKeys []apiKey     // nil: API keys off
	jwt     *jwtVerifier // nil: JWT off
	jwks    *remoteJWKS  // the JWT key source when it is a JWKS URL
	jwtDesc string       // who issues the JWTs, for Schemes
}

// NewClients validates cfg and returns Clients. It reads JWTKeyFile but
// never touches the network: the JWKS is fetched on first use or by Run.
// Errors name the setting at fault and never echo a secret.
func NewClients(cfg ClientConfig) (*Clients, error) {
	c := &Clients{header: cfg.APIKeyHeader}
	if c.header == "" {
		c.header = DefaultAPIKeyHeader
	}
	if !headerNameRe.MatchString(c.header) || strings.EqualFold(c.header, "Authorization") {
		return nil, fmt.Errorf("auth: APIKeyHeader %q: want a header name of 1 to 64 letters, digits or '-', other than Authorization", c.header)
	}
	keys, err := parseAPIKeys(cfg.APIKeys)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	c.apiKeys = keys
	if err := c.setupJWT(cfg); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return c, nil
}

// setupJWT builds the JWT verifier when cfg turns JWT authentication on.
func (c *Clients) setupJWT(cfg ClientConfig) error {
	jwksURL, file := strings.TrimSpace(cfg.JWTJWKSURL), strings.TrimSpace(cfg.JWTKeyFile)
	iss, aud := strings.TrimSpace(cfg.JWTIssuer), strings.TrimSpace(cfg.JWTAudience)
	switch {
	case jwksURL == "" && file == "":
		if iss != "" || aud != "" {
			return errors.New("JWTIssuer or JWTAudience is set but neither JWTJWKSURL nor JWTKeyFile: set one to turn JWT authentication on, or clear them")
		}
		return nil
	case jwksURL != "" && file != "":
		return errors.New("JWTJWKSURL and JWTKeyFile are both set: set one")
	case iss == "":
		return errors.New("JWTIssuer is required with JWTJWKSURL or JWTKeyFile")
	case aud == "":
		return errors.New("JWTAudience is required with JWTJWKSURL or JWTKeyFile")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	var (
		src  keySource
		algs []string
	)
	if jwksURL != "" {
		r, err := newRemoteJWKS(jwksURL, cfg.HTTP, now, loggerOrDefault(cfg.Logger))
		if err != nil {
			return fmt.Errorf("JWTJWKSURL: %w", err)
		}
		c.jwks, src, algs = r, r, clientJWTAlgs
	} else {
		k, err := loadPublicKeyFile(file)
		if err != nil {
			return fmt.Errorf("JWTKeyFile %s: %w", file, err)
		}
		src, algs = staticKey{k}, k.algs
	}
	c.jwt = newJWTVerifier(iss, aud, src, algs, now)
	c.jwtDesc = fmt.Sprintf("a JWT issued by %s for audience %s", iss, aud)
	return nil
}

// loggerOrDefault returns l, or slog.Default() when l is nil.
func loggerOrDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// Enabled reports whether some credential is configured. Without one,
// Authenticate refuses everything with ErrNoCredentials: a caller that
// runs open checks Enabled first.
func (c *Clients) Enabled() bool { return len(c.apiKeys) > 0 || c.jwt != nil }

// APIKeyName returns the name of the configured API key that key is, if
// it is one. relay uses it to refuse a static token (admin, worker) that
// is also a client's key. The comparison is the one Authenticate makes.
func (c *Clients) APIKeyName(key string) (string, bool) { return matchAPIKey(c.apiKeys, key) }

// Authenticate reads the request's credential through header (a request
// header by name, "" when absent, such as fiber's c.Get) and returns its
// principal.
//
// An Authorization: Bearer token that looks like a JWT (three base64url
// segments) is verified as a JWT when JWT authentication is on; any other
// bearer token, and the API key header, is checked as an API key. Sending
// both a bearer token and the API key header is refused; an Authorization
// header of another scheme (say Basic, from a proxy) is ignored. The API
// key header is read only when API keys are configured. With JWT
// authentication on, an API key must therefore not look like a JWT.
//
// Errors wrap ErrNoCredentials or ErrBadCredentials.
func (c *Clients) Authenticate(ctx context.Context, header func(name string) string) (Principal, error) {
	if !c.Enabled() {
		return Principal{}, fmt.Errorf("auth: %w: client authentication is not configured", ErrNoCredentials)
	}
	authz := trimOWS(header("Authorization"))
	token, bearer := cutBearer(authz)
	key := ""
	if len(c.apiKeys) > 0 {
		key = trimOWS(header(c.header))
	}
	switch {
	case bearer && key != "":
		return Principal{}, badCredentials("both Authorization: Bearer and %s are present", c.header)
	case key != "":
		return c.checkAPIKey(key, c.header)
	case !bearer && authz != "":
		return Principal{}, fmt.Errorf("auth: %w: Authorization scheme is not Bearer", ErrNoCredentials)
	case !bearer:
		return Principal{}, fmt.Errorf("auth: %w", ErrNoCredentials)
	case token == "":
		return Principal{}, badCredentials("empty bearer token")
	case len(token) > maxCredentialLen:
		return Principal{}, badCredentials("bearer token of %d bytes, more than %d", len(token), maxCredentialLen)
	case c.jwt != nil && looksLikeJWT(token):
		return c.jwt.verify(ctx, token)
	case len(c.apiKeys) == 0:
		return Principal{}, badCredentials("bearer token is not a JWT, and no API keys are configured")
	default:
		return c.checkAPIKey(token, "bearer token")
	}
}

// checkAPIKey authenticates key, which came from where (for the error).
func (c *Clients) checkAPIKey(key, where string) (Principal, error) {
	if len(key) > maxCredentialLen {
		return Principal{}, badCredentials("API key (%s) of %d bytes, more than %d", where, len(key), maxCredentialLen)
	}
	name, ok := matchAPIKey(c.apiKeys, key)
	if !ok {
		return Principal{}, badCredentials("unknown API key (%s)", where)
	}
	return Principal{ID: "key:" + name, Kind: KindAPIKey}, nil
}

// badCredentials returns ErrBadCredentials with a detail. The detail must
// never include the presented secret.
func badCredentials(format string, args ...any) error {
	return fmt.Errorf("auth: %w: %s", ErrBadCredentials, fmt.Sprintf(format, args...))
}

// trimOWS strips the optional white space (spaces, tabs) around a header value.
func trimOWS(v string) string { return strings.Trim(v, " \t") }

// cutBearer returns the token of an "Authorization: Bearer <token>" value
// (scheme matched case-insensitively, RFC 7235) and whether the scheme is
// Bearer.
func cutBearer(authz string) (string, bool) {
	scheme, rest, _ := strings.Cut(authz, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return trimOWS(rest), true
}

// BearerToken returns the token of an Authorization header value whose
// scheme is Bearer, matched case-insensitively (RFC 7235) as client
// credentials are, and whether it is one. Surrounding white space is
// ignored.
func BearerToken(authz string) (string, bool) { return cutBearer(trimOWS(authz)) }

// looksLikeJWT reports whether s is three base64url segments separated by
// dots, the first two non-empty (the last is empty for alg "none", which
// is then refused by the JWT verifier with a clear reason).
func looksLikeJWT(s string) bool {
	dots := 0
	segLen := 0
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b == '.':
			if segLen == 0 {
				return false
			}
			dots++
			segLen = 0
		case b >= 'A' && b <= 'Z', b >= 'a' && b <= 'z', b >= '0' && b <= '9', b == '-', b == '_':
			segLen++
		default:
			return false
		}
	}
	return dots == 2
}

// SecurityScheme is one authentication scheme the agent card declares
// (OpenAPI's Security Scheme Object, as A2A uses it).
type SecurityScheme struct {
	Name         string // the scheme's key in securitySchemes
	Type         string // "apiKey" or "http"
	In           string // apiKey: where the key goes ("header")
	HeaderName   string // apiKey: the header's name
	Scheme       string // http: "bearer"
	BearerFormat string // http bearer: "JWT" when JWTs are accepted
	Description  string
}

// Schemes returns what the agent card declares, any one of which
// authenticates: the API key header when API keys are configured, and
// HTTP bearer (a JWT, or an API key) whenever some credential is. It is
// nil when none is.
func (c *Clients) Schemes() []SecurityScheme {
	var out []SecurityScheme
	if len(c.apiKeys) > 0 {
		out = append(out, SecurityScheme{Name: "apiKey", Type: "apiKey", In: "header", HeaderName: c.header,
			Description: fmt.Sprintf("An API key in the %s header, or as Authorization: Bearer <API key>.", c.header)})
	}
	switch {
	case c.jwt != nil && len(c.apiKeys) > 0:
		out = append(out, SecurityScheme{Name: "bearer", Type: "http", Scheme: "bearer", BearerFormat: "JWT",
			Description: "Authorization: Bearer <token>: " + c.jwtDesc + ", or an API key."})
	case c.jwt != nil:
		out = append(out, SecurityScheme{Name: "bearer", Type: "http", Scheme: "bearer", BearerFormat: "JWT",
			Description: "Authorization: Bearer <token>: " + c.jwtDesc + "."})
	case len(c.apiKeys) > 0:
		out = append(out, SecurityScheme{Name: "bearer", Type: "http", Scheme: "bearer",
			Description: "Authorization: Bearer <API key>."})
	}
	return out
}

// Run refreshes the JWT issuer's JWKS until ctx is done: at once, then
// every 10 minutes (every 30 s while fetches fail; the last good key set
// stays in use). Without a JWKS URL it returns at once.
func (c *Clients) Run(ctx context.Context) {
	if c.jwks != nil {
		c.jwks.run(ctx)
	}
}
