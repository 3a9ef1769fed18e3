package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Defaults of Config.
const (
	DefaultMaxAge         = 5 * time.Minute
	DefaultLeeway         = 30 * time.Second
	DefaultReplayCapacity = 100_000
	DefaultMaxBody        = 10 << 20
	// JWKSPath is where relay publishes its keys, at the root of its origin.
	JWKSPath = "/.well-known/jwks.json"
)

// algorithms are the JWT algorithms relay signs with; no other is accepted.
var algorithms = []string{"ES256", "EdDSA", "RS256"}

// Config configures a Verifier. Issuer and Audience (or AudienceFunc) are
// required; zero values of the rest take the documented defaults.
type Config struct {
	// Issuer is relay's public URL (RELAY_PUBLIC_URL), which relay puts in
	// the JWT's iss. Trailing slashes are ignored, as relay drops them.
	Issuer string
	// JWKSURL is where relay publishes its keys; default: the Issuer's
	// scheme and host + JWKSPath. It must be https, or http to a loopback
	// host, unless AllowInsecureJWKS is set.
	JWKSURL string
	// AllowInsecureJWKS allows an http JWKSURL to a host other than
	// loopback (say http://relay:8080 inside a compose network). Whoever
	// can tamper with that traffic can forge notifications.
	AllowInsecureJWKS bool
	// Audience is this receiver's webhook URL exactly as it was registered
	// in the push config: relay's JWT carries it as aud, so a notification
	// meant for another webhook is refused.
	Audience string
	// AudienceFunc, when set, decides instead of Audience which aud values
	// are this receiver's: for receivers registered under several URLs
	// (say one per task, with a query string).
	AudienceFunc func(aud string) bool
	// Token is the push config's token, which relay sends in
	// X-A2A-Notification-Token and A2A-Notification-Token; "" does not
	// check it.
	Token string
	// Authorization is the exact Authorization header to expect when the
	// push config has authentication credentials (relay then sends
	// "<scheme> <credentials>", e.g. "Bearer s3cret", and the JWT only in
	// A2A-Notification-JWT); "" does not check it.
	Authorization string
	// MaxAge refuses a JWT issued (iat) longer ago (default 5m, relay's
	// token lifetime). exp is also required and checked.
	MaxAge time.Duration
	// Leeway is the clock skew allowed between relay and this receiver in
	// every time check (default 30s; negative: none).
	Leeway time.Duration
	// ReplayWindow is how long a processed notification id is remembered
	// (see Verifier.Done); default MaxAge + Leeway, the longest a captured
	// request stays valid, and it may not be shorter. Make it longer to
	// also absorb relay's late retries and manual redeliveries, which keep
	// the id; negative: remember nothing.
	ReplayWindow time.Duration
	// ReplayCapacity bounds the ids remembered (default 100,000); when
	// full, the oldest is forgotten first.
	ReplayCapacity int
	// MaxBody refuses longer bodies (default 10 MiB).
	MaxBody int64
	// HTTP fetches the JWKS (default: a client that follows redirects only
	// to URLs JWKSURL could be). Each fetch is bounded to 10 s.
	HTTP *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// DisableValidationEcho makes the middleware refuse relay's URL
	// ownership check (GET ?validationToken=X, see Middleware).
	DisableValidationEcho bool
}

// Verifier checks relay's webhook notifications. It is safe for
// concurrent use; make one per webhook URL (or AudienceFunc) and keep it:
// it caches relay's keys and remembers processed notification ids.
type Verifier struct {
	cfg    Config
	issuer string
	keys   *keySource
	replay *replayCache
	parser *jwt.Parser
}

// NewVerifier checks cfg and returns a Verifier. It fetches nothing: the
// JWKS is fetched on the first Verify.
func NewVerifier(cfg Config) (*Verifier, error) {
	issuer := strings.TrimRight(cfg.Issuer, "/")
	if issuer == "" {
		return nil, errors.New("webhook: Config.Issuer (relay's public URL) is required")
	}
	if cfg.Audience == "" && cfg.AudienceFunc == nil {
		return nil, errors.New("webhook: Config.Audience (this webhook's URL as registered) is required")
	}
	if cfg.JWKSURL == "" {
		u, err := url.Parse(issuer)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, errors.New("webhook: Config.Issuer is not an absolute URL; set Config.JWKSURL")
		}
		cfg.JWKSURL = u.Scheme + "://" + u.Host + JWKSPath
	}
	u, err := url.Parse(cfg.JWKSURL)
	if err != nil {
		return nil, errors.New("webhook: Config.JWKSURL is not a valid URL")
	}
	if err := checkJWKSURL(u, cfg.AllowInsecureJWKS); err != nil {
		return nil, fmt.Errorf("webhook: Config.JWKSURL: %w", err)
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	switch {
	case cfg.Leeway == 0:
		cfg.Leeway = DefaultLeeway
	case cfg.Leeway < 0:
		cfg.Leeway = 0
	}
	if cfg.ReplayWindow == 0 {
		cfg.ReplayWindow = cfg.MaxAge + cfg.Leeway
	}
	if cfg.ReplayWindow > 0 && cfg.ReplayWindow < cfg.MaxAge+cfg.Leeway {
		return nil, fmt.Errorf("webhook: Config.ReplayWindow %v is shorter than MaxAge + Leeway (%v): a captured request could be replayed after it",
			cfg.ReplayWindow, cfg.MaxAge+cfg.Leeway)
	}
	if cfg.ReplayCapacity <= 0 {
		cfg.ReplayCapacity = DefaultReplayCapacity
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTP == nil {
		insecure := cfg.AllowInsecureJWKS
		cfg.HTTP = &http.Client{Timeout: fetchTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("more than 3 redirects")
			}
			return checkJWKSURL(req.URL, insecure)
		}}
	}
	v := &Verifier{cfg: cfg, issuer: issuer,
		keys:   &keySource{url: cfg.JWKSURL, client: cfg.HTTP, now: cfg.Now},
		replay: newReplayCache(cfg.ReplayWindow, cfg.ReplayCapacity),
		parser: jwt.NewParser(jwt.WithValidMethods(algorithms), jwt.WithoutClaimsValidation())}
	return v, nil
}

// checkJWKSURL admits https URLs, http ones to a loopback host, and any
// http URL when insecure.
func checkJWKSURL(u *url.URL, insecure bool) error {
	switch {
	case u.Host == "":
		return errors.New("not an absolute URL")
	case u.Scheme == "https", u.Scheme == "http" && (insecure || isLoopback(u.Hostname())):
		return nil
	}
	return errors.New("want https (http only to a loopback host, or with AllowInsecureJWKS)")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// claims are the claims of relay's notification JWT.
// Verify reads them leniently (aud may be an array, nbf may be there).
type claims struct {
	jwt.RegisteredClaims
	RelayClaims
}

// Verify checks that r is a notification relay sent to this webhook, and
// decodes it. In order, it checks:
//
//   - the JWT, from A2A-Notification-JWT (or Authorization: Bearer, when
//     that holds a JWT): signed with ES256, EdDSA or RS256 by the key its
//     kid names in relay's JWKS (fetched again when the kid is unknown, at
//     most once per MinRefetch); iss is Config.Issuer; aud is
//     Config.Audience; exp has not passed; iat is neither in the future
//     nor older than Config.MaxAge (each with Config.Leeway);
//   - jti equals the A2A-Notification-Id header;
//   - the token headers (Config.Token) and Authorization
//     (Config.Authorization), when configured;
//   - the body: at most Config.MaxBody, its hex SHA-256 is the
//     request_body_sha256 claim, it decodes in the dialect of the
//     A2A-Version header (see Decode), and its task id is the taskId claim;
//   - that the id was not processed already (see Done): ErrReplayed.
//
// It reads the body and, once read, puts back a reader of the same bytes
// in r.Body. Its errors match one of the package's Err values.
//
// Verify does not remember the notification: relay retries a notification
// with the same id when the receiver did not answer 2xx, and those retries
// must get through. Call Done once it has been processed; Middleware does.
func (v *Verifier) Verify(r *http.Request) (*Notification, error) {
	raw := notificationJWT(r.Header)
	if raw == "" {
		return nil, fmt.Errorf("%w: no %s header (or Authorization: Bearer <JWT>)", ErrNoJWT, HeaderJWT)
	}
	c, err := v.parse(r.Context(), raw)
	if err != nil {
		return nil, err
	}
	now := v.cfg.Now()
	if err := v.checkClaims(c, now); err != nil {
		return nil, err
	}
	if id := r.Header.Get(HeaderID); c.ID == "" || id != c.ID {
		return nil, fmt.Errorf("%w: the %s header and the JWT's jti must be present and equal", ErrNotificationID, HeaderID)
	}
	if err := v.checkSecrets(r.Header); err != nil {
		return nil, err
	}
	body, err := v.readBody(r)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	if want, err := hex.DecodeString(c.BodySHA256); err != nil || subtle.ConstantTimeCompare(want, sum[:]) != 1 {
		return nil, fmt.Errorf("%w: the body's SHA-256 is not the JWT's request_body_sha256", ErrBodyHash)
	}
	n, err := Decode(dialectOf(r.Header.Get(HeaderVersion)), body)
	if err != nil {
		return nil, err
	}
	if c.TaskID == "" || c.TaskID != n.TaskID {
		return nil, fmt.Errorf("%w: the JWT's taskId is not the body's task id", ErrTaskID)
	}
	n.ID, n.IssuedAt = c.ID, c.IssuedAt.Time
	n.TraceParent = traceParent(r.Header.Get(HeaderTraceParent))
	if v.replay.seen(n.ID, now) {
		return nil, fmt.Errorf("%w: notification %.64q", ErrReplayed, n.ID)
	}
	return n, nil
}

// Done records that n was processed: a request carrying its id within
// Config.ReplayWindow fails Verify with ErrReplayed from now on. Call it
// after your handling succeeded, and answer relay 2xx; a notification
// whose handling failed is not marked, so relay's retry of it (same id,
// fresh JWT) passes Verify. Middleware calls Done when the handler
// answered 2xx. Done of nil, of a notification without an id (from
// Decode), or with ReplayWindow < 0 does nothing.
func (v *Verifier) Done(n *Notification) {
	if n == nil || n.ID == "" {
		return
	}
	v.replay.add(n.ID, v.cfg.Now())
}

// parse checks the JWT's signature against relay's JWKS and decodes its claims.
func (v *Verifier) parse(ctx context.Context, raw string) (*claims, error) {
	var keyErr error
	c := &claims{}
	_, err := v.parser.ParseWithClaims(raw, c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			keyErr = fmt.Errorf("%w: the JWT has no kid", ErrBadSignature)
			return nil, keyErr
		}
		var key any
		key, keyErr = v.keys.key(ctx, kid, t.Method.Alg())
		return key, keyErr
	})
	switch {
	case err == nil:
		return c, nil
	case keyErr != nil:
		return nil, keyErr
	case errors.Is(err, jwt.ErrTokenMalformed):
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
}

// checkClaims checks iss, aud, exp, iat and nbf at now.
func (v *Verifier) checkClaims(c *claims, now time.Time) error {
	leeway := v.cfg.Leeway
	if strings.TrimRight(c.Issuer, "/") != v.issuer {
		return fmt.Errorf("%w: iss %.128q", ErrIssuer, c.Issuer)
	}
	if !v.audienceOK(c.Audience) {
		return fmt.Errorf("%w: aud %.128q is not this webhook", ErrAudience, strings.Join(c.Audience, " "))
	}
	switch {
	case c.ExpiresAt == nil || c.IssuedAt == nil:
		return fmt.Errorf("%w: exp and iat are required", ErrClaims)
	case !now.Before(c.ExpiresAt.Add(leeway)):
		return fmt.Errorf("%w: exp was %s", ErrExpired, c.ExpiresAt.UTC().Format(time.RFC3339))
	case c.IssuedAt.After(now.Add(leeway)):
		return fmt.Errorf("%w: iat is %s, in the future", ErrNotYetValid, c.IssuedAt.UTC().Format(time.RFC3339))
	case c.NotBefore != nil && c.NotBefore.After(now.Add(leeway)):
		return fmt.Errorf("%w: nbf is %s", ErrNotYetValid, c.NotBefore.UTC().Format(time.RFC3339))
	case now.Sub(c.IssuedAt.Time) > v.cfg.MaxAge+leeway:
		return fmt.Errorf("%w: issued at %s, more than %v ago", ErrExpired, c.IssuedAt.UTC().Format(time.RFC3339), v.cfg.MaxAge)
	}
	return nil
}

func (v *Verifier) audienceOK(auds jwt.ClaimStrings) bool {
	for _, a := range auds {
		if v.cfg.AudienceFunc != nil && v.cfg.AudienceFunc(a) || v.cfg.AudienceFunc == nil && a == v.cfg.Audience {
			return true
		}
	}
	return false
}
