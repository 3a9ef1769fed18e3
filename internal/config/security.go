package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
)

// Auth modes.
const (
	// AuthAuto turns client authentication on when client credentials are
	// configured; with none, the embedded store runs open (and says so
	// loudly) and a real Redis refuses to start.
	AuthAuto = "auto"
	// AuthNone turns client authentication off, explicitly.
	AuthNone = "none"
	// AuthRequired refuses to start without client credentials.
	AuthRequired = "required"
)

// Security is client authentication, tenant limits and secrets at rest.
type Security struct {
	// APIKeys are "<name>:sha256:<hex>" entries: the SHA-256 of each client
	// key (relay hash-key prints it), never the key itself.
	APIKeys []string `yaml:"api_keys"`
	// APIKeyHeader may carry an API key besides Authorization: Bearer.
	APIKeyHeader string `yaml:"api_key_header"`
	// Client JWTs: issuer and audience they must name, and the issuer's
	// JWKS URL or a PEM public key file.
	ClientJWTIssuer   string `yaml:"client_jwt_issuer"`
	ClientJWTAudience string `yaml:"client_jwt_audience"`
	ClientJWTJWKSURL  string `yaml:"client_jwt_jwks_url"`
	ClientJWTKeyFile  string `yaml:"client_jwt_key_file"`
	// AdminTokens authenticate the management API (/v1/deliveries, /v1/keys).
	AdminTokens []string `yaml:"admin_tokens"`
	// RateLimit is requests per second per client on the A2A endpoint (0: none).
	RateLimit int `yaml:"rate_limit"`
	// AuthFailureLimit is failed authentications per second per remote
	// address, across instances, before that address is refused (0: none).
	AuthFailureLimit int `yaml:"auth_failure_limit"`
	// MaxStreamsPerClient bounds one client's open SSE streams per instance.
	MaxStreamsPerClient int `yaml:"max_streams_per_client"`
	// ClientMaxStorageBytes is each client's budget of bytes stored in
	// Redis (0: none).
	ClientMaxStorageBytes int `yaml:"client_max_storage_bytes"`
	// ClientMaxTasks is each client's budget of tasks stored at once (0: none).
	ClientMaxTasks int `yaml:"client_max_tasks"`
	// SecretKeys encrypt push config secrets and signing keys at rest:
	// "<kid>:<base64 of 32 bytes>", the first one current.
	SecretKeys []string `yaml:"secret_keys"`
}

func securitySettings() []Setting {
	return []Setting{
		{Key: "api_keys", Env: "RELAY_API_KEYS", Flag: "api-keys", Default: "", Group: groupSecurity,
			Help:  "Client API keys, as <name>:sha256:<hex of the key's SHA-256> (relay hash-key <key> prints it), comma-separated in env and flags. The name is the client's identity: its tasks are its own.",
			value: list(func(c *Config) *[]string { return &c.Security.APIKeys }, checkAPIKey)},
		{Key: "api_key_header", Env: "RELAY_API_KEY_HEADER", Flag: "api-key-header", Default: "X-API-Key", Group: groupSecurity,
			Help:  "Header that may carry an API key (besides Authorization: Bearer <key>).",
			value: text(func(c *Config) *string { return &c.Security.APIKeyHeader }, checkHeaderName)},
		{Key: "client_jwt_issuer", Env: "RELAY_CLIENT_JWT_ISSUER", Flag: "client-jwt-issuer", Default: "", Group: groupSecurity,
			Help:  "Issuer (iss) client JWTs must carry; with client_jwt_audience and a JWKS URL or key file it turns JWT client authentication on. The principal is iss|sub.",
			value: text(func(c *Config) *string { return &c.Security.ClientJWTIssuer }, nil)},
		{Key: "client_jwt_audience", Env: "RELAY_CLIENT_JWT_AUDIENCE", Flag: "client-jwt-audience", Default: "", Group: groupSecurity,
			Help:  "Audience (aud) client JWTs must carry.",
			value: text(func(c *Config) *string { return &c.Security.ClientJWTAudience }, nil)},
		{Key: "client_jwt_jwks_url", Env: "RELAY_CLIENT_JWT_JWKS_URL", Flag: "client-jwt-jwks-url", Default: "", Group: groupSecurity,
			Help:  "JWKS URL of the client JWT issuer.",
			value: text(func(c *Config) *string { return &c.Security.ClientJWTJWKSURL }, checkOptionalURL)},
		{Key: "client_jwt_key_file", Env: "RELAY_CLIENT_JWT_KEY_FILE", Flag: "client-jwt-key-file", Default: "", Group: groupSecurity,
			Help:  "PEM public key (or certificate) that verifies client JWTs, instead of a JWKS URL.",
			value: text(func(c *Config) *string { return &c.Security.ClientJWTKeyFile }, nil)},
		{Key: "admin_tokens", Env: "RELAY_ADMIN_TOKENS", Flag: "admin-tokens", Default: "", Group: groupSecurity,
			Help:  "Tokens of the management API (/v1/deliveries, /v1/keys/rotate), at least 16 characters, comma-separated. With client authentication on and none set, the management API is closed.",
			value: list(func(c *Config) *[]string { return &c.Security.AdminTokens }, checkToken)},
		{Key: "rate_limit", Env: "RELAY_RATE_LIMIT", Flag: "rate-limit", Default: "100", Group: groupSecurity,
			Help:  "A2A requests per second one client may make, across all instances (0: no limit). Without authentication the limit is per remote address.",
			value: number(func(c *Config) *int { return &c.Security.RateLimit }, 0, 1000000)},
		{Key: "auth_failure_limit", Env: "RELAY_AUTH_FAILURE_LIMIT", Flag: "auth-failure-limit", Default: "10", Group: groupSecurity,
			Help:  "Failed authentications per second one remote address may make on the A2A, management and worker APIs, across all instances; past it the address gets 429 on those APIs for the rest of that second and the next (0: no limit). Behind a proxy every client shares its address: set it to 0 there, or limit failures at the proxy.",
			value: number(func(c *Config) *int { return &c.Security.AuthFailureLimit }, 0, 1000000)},
		{Key: "max_streams_per_client", Env: "RELAY_MAX_STREAMS_PER_CLIENT", Flag: "max-streams-per-client", Default: "32", Group: groupSecurity,
			Help:  "SSE streams one client may hold open on one instance (0: only max_streams applies).",
			value: number(func(c *Config) *int { return &c.Security.MaxStreamsPerClient }, 0, 100000)},
		{Key: "client_max_storage_bytes", Env: "RELAY_CLIENT_MAX_STORAGE_BYTES", Flag: "client-max-storage-bytes", Default: "33554432", Group: groupSecurity,
			Help:  "Bytes one client may have stored in Redis (tasks, events, push configs, delivery records), counted when written and for a task retention (or delivery retention, the longer) after each task's last change; past it a send or push config is refused with -32029, data limit storage_bytes (0: no budget; the default is 32 MiB). Without authentication every request shares one budget.",
			value: number(func(c *Config) *int { return &c.Security.ClientMaxStorageBytes }, 0, 0)},
		{Key: "client_max_tasks", Env: "RELAY_CLIENT_MAX_TASKS", Flag: "client-max-tasks", Default: "10000", Group: groupSecurity,
			Help:  "Tasks one client may have stored at once, open or finished and not yet expired; past it a new task is refused with -32029, data limit tasks (0: no budget). Without authentication every request shares one budget.",
			value: number(func(c *Config) *int { return &c.Security.ClientMaxTasks }, 0, 0)},
		{Key: "secret_keys", Env: "RELAY_SECRET_KEYS", Flag: "secret-keys", Default: "", Group: groupSecurity,
			Help:  "Keys that encrypt push config tokens and credentials and the signing keys at rest (AES-256-GCM): <kid>:<base64 of 32 random bytes>, comma-separated, the first one current; older ones still decrypt and their data is re-encrypted as it is read. Required with a real Redis unless auth is none.",
			value: list(func(c *Config) *[]string { return &c.Security.SecretKeys }, checkSecretKeySpec)},
	}
}

var (
	apiKeySpec    = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}:sha256:[0-9a-f]{64}$`)
	headerName    = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
	secretKeySpec = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/=_-]{43,44}$`)
)

func checkAPIKey(v string) (string, error) {
	if !apiKeySpec.MatchString(v) {
		return "", errors.New("an API key entry is <name>:sha256:<64 lowercase hex digits> (the key's SHA-256, as relay hash-key prints it), the name 1 to 64 letters, digits, '.', '_' or '-'")
	}
	return v, nil
}

func checkHeaderName(v string) (string, error) {
	if !headerName.MatchString(v) {
		return "", fmt.Errorf("invalid header name %q", v)
	}
	return v, nil
}

func checkOptionalURL(v string) (string, error) {
	if v == "" {
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("invalid value %q: want an absolute http(s) URL", v)
	}
	return v, nil
}

// checkToken requires static tokens (admin, worker) long enough not to be
// guessed.
func checkToken(v string) (string, error) {
	if len(v) < 16 {
		return "", errors.New("a token must be at least 16 characters")
	}
	return v, nil
}

func checkSecretKeySpec(v string) (string, error) {
	if !secretKeySpec.MatchString(v) {
		return "", errors.New("a secret key is <kid>:<base64 of 32 bytes> (e.g. k1:$(head -c32 /dev/urandom | base64))")
	}
	return v, nil
}

// checkSecurity checks the settings that depend on each other.
func (l *loader) checkSecurity() error {
	c := &l.cfg
	s := c.Security
	jwtOn := s.ClientJWTJWKSURL != "" || s.ClientJWTKeyFile != ""
	if jwtOn && (s.ClientJWTIssuer == "" || s.ClientJWTAudience == "") {
		return &SettingError{Key: "client_jwt_issuer", Source: l.source("client_jwt_issuer"),
			Err: errors.New("client JWTs need both client_jwt_issuer and client_jwt_audience")}
	}
	if s.ClientJWTJWKSURL != "" && s.ClientJWTKeyFile != "" {
		return &SettingError{Key: "client_jwt_key_file", Source: l.source("client_jwt_key_file"),
			Err: errors.New("set client_jwt_jwks_url or client_jwt_key_file, not both")}
	}
	if c.Auth == AuthRequired && !c.HasClientCredentials() {
		return &SettingError{Key: "auth", Source: l.source("auth"),
			Err: errors.New("auth is required but no client credentials are configured (api_keys, or client_jwt_*)")}
	}
	return nil
}

// HasClientCredentials reports whether some client credential is configured.
func (c *Config) HasClientCredentials() bool {
	s := c.Security
	return len(s.APIKeys) > 0 || s.ClientJWTJWKSURL != "" || s.ClientJWTKeyFile != ""
}

// AuthOn decides whether clients must authenticate, or why relay must not
// start: see AuthAuto.
func (c *Config) AuthOn() (bool, error) {
	switch {
	case c.Auth == AuthNone:
		return false, nil
	case c.HasClientCredentials():
		return true, nil
	case c.RedisURL == "":
		return false, nil // the embedded quickstart
	}
	return false, errors.New("relay has a real Redis (RELAY_REDIS_URL) but no client credentials: set RELAY_API_KEYS or RELAY_CLIENT_JWT_*, or RELAY_AUTH=none to run without client authentication on purpose")
}
