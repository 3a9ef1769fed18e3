package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/backpressure"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/metrics"
	"github.com/a2arelay/relay/internal/quota"
	"github.com/a2arelay/relay/internal/ratelimit"
	"github.com/a2arelay/relay/internal/secrets"
	"github.com/a2arelay/relay/internal/ssrf"
	"github.com/a2arelay/relay/internal/tenant"
)

// setupSecurity decides whether clients must authenticate and builds the
// verifier and the rate limiter. It refuses to start a relay on a real
// Redis that nobody configured credentials for.
func (a *App) setupSecurity(ctx context.Context) error {
	on, err := a.cfg.AuthOn()
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	s := a.cfg.Security
	a.clients, err = auth.NewClients(auth.ClientConfig{APIKeys: s.APIKeys, APIKeyHeader: s.APIKeyHeader,
		JWTIssuer: s.ClientJWTIssuer, JWTAudience: s.ClientJWTAudience, JWTJWKSURL: s.ClientJWTJWKSURL,
		JWTKeyFile: s.ClientJWTKeyFile, Logger: a.log})
	if err != nil {
		return fmt.Errorf("app: client authentication: %w", err)
	}
	a.authOn = on
	if err := a.checkStaticTokens(); err != nil {
		return err
	}
	if err := a.setupSecrets(ctx); err != nil {
		return err
	}
	a.adminTokens = auth.NewTokens(s.AdminTokens)
	if s.RateLimit > 0 {
		if a.limiter, err = ratelimit.New(ratelimit.Deps{RDB: a.rdb, Keys: a.layout}, ratelimit.Config{Limit: s.RateLimit}); err != nil {
			return fmt.Errorf("app: RELAY_RATE_LIMIT: %w", err)
		}
	}
	if s.AuthFailureLimit > 0 {
		if a.strikes, err = ratelimit.NewStrikes(ratelimit.Deps{RDB: a.rdb, Keys: a.layout}, ratelimit.Config{Limit: s.AuthFailureLimit}); err != nil {
			return fmt.Errorf("app: RELAY_AUTH_FAILURE_LIMIT: %w", err)
		}
	}
	switch {
	case on:
		a.log.InfoContext(ctx, "client authentication is on", "api_keys", len(s.APIKeys), "jwt", s.ClientJWTIssuer != "")
	case a.cfg.Auth == "none":
		a.log.WarnContext(ctx, "CLIENT AUTHENTICATION IS OFF (RELAY_AUTH=none): anyone who reaches relay can use it, read every task and reach the management API; run it only where every client is trusted")
	default:
		a.log.WarnContext(ctx, "CLIENT AUTHENTICATION IS OFF: the embedded quickstart store runs without client credentials; anyone who reaches relay can use it. Set RELAY_API_KEYS (see SECURITY.md) before exposing it")
	}
	return nil
}

// checkStaticTokens refuses an admin or worker token that is also a
// client API key: that client could otherwise read every delivery through
// the management API, or claim tasks as a worker. Errors name the entry by
// index and the client by name, never the token.
func (a *App) checkStaticTokens() error {
	sets := []struct {
		env    string
		tokens []string
	}{{"RELAY_ADMIN_TOKENS", a.cfg.Security.AdminTokens}, {"RELAY_WORKER_TOKENS", a.cfg.WorkerTokens}}
	for _, set := range sets {
		for i, tok := range set.tokens {
			if name, ok := a.clients.APIKeyName(tok); ok {
				return fmt.Errorf("app: %s[%d] is also the API key of client %q (RELAY_API_KEYS): that client would get its powers; give it a token of its own", set.env, i, name)
			}
		}
	}
	return nil
}

// checkAllowlist refuses webhook_allow_cidrs ranges wider than a private
// range unless the operator allowed them on purpose, and then warns.
func (a *App) checkAllowlist(ctx context.Context, guard *ssrf.Guard) error {
	wide := guard.Wide()
	if len(wide) == 0 {
		return nil
	}
	ranges := make([]string, len(wide))
	for i, p := range wide {
		ranges[i] = p.String()
	}
	list := strings.Join(ranges, ", ")
	if !a.cfg.WebhookAllowWideCIDRs {
		return fmt.Errorf("app: RELAY_WEBHOOK_ALLOW_CIDRS: %s is wider than any private range, so webhooks could reach every address in it, public or private: narrow it, or set RELAY_WEBHOOK_ALLOW_WIDE_CIDRS=true to allow it on purpose", list)
	}
	a.log.WarnContext(ctx, "WEBHOOKS MAY TARGET ADDRESSES THE SSRF GUARD WOULD REFUSE: RELAY_WEBHOOK_ALLOW_CIDRS holds ranges wider than a private network (allowed by RELAY_WEBHOOK_ALLOW_WIDE_CIDRS)", "ranges", list)
	return nil
}

// hintLoopback says, when relay runs without client authentication on a
// loopback address (the quickstart's default), how to listen on every
// interface: other machines cannot reach it.
func (a *App) hintLoopback(ctx context.Context, addr net.Addr) {
	tcp, ok := addr.(*net.TCPAddr)
	if a.authOn || !ok || !tcp.IP.IsLoopback() {
		return
	}
	a.log.InfoContext(ctx, fmt.Sprintf("relay listens on loopback only (client authentication is off): other machines cannot reach it; to listen on every interface set RELAY_ADDR=:%d, with client credentials (RELAY_API_KEYS, see SECURITY.md) or RELAY_AUTH=none on purpose", tcp.Port),
		"addr", addr.String())
}

// setupSecrets builds the ring that seals secrets at rest. The embedded
// store (nothing persists) gets a key of its own; a real Redis needs
// RELAY_SECRET_KEYS unless relay runs open on purpose.
func (a *App) setupSecrets(ctx context.Context) error {
	var err error
	switch {
	case len(a.cfg.Security.SecretKeys) > 0:
		a.ring, err = secrets.ParseKeys(a.cfg.Security.SecretKeys)
		if err != nil {
			return fmt.Errorf("app: RELAY_SECRET_KEYS: %w", err)
		}
	case a.cfg.RedisURL == "":
		a.ring, err = secrets.Generate("ephemeral")
		if err != nil {
			return fmt.Errorf("app: secret key: %w", err)
		}
	case a.authOn:
		return errors.New("app: relay has a real Redis and client authentication but no RELAY_SECRET_KEYS to encrypt push config secrets and signing keys at rest: set one (see SECURITY.md)")
	default:
		a.log.WarnContext(ctx, "no RELAY_SECRET_KEYS: push config tokens and credentials and the signing keys are stored in plain text in Redis")
	}
	return nil
}

// sealer is the ring as auth.KeyConfig wants it: nil when there is none.
func (a *App) sealer() auth.Sealer {
	if a.ring == nil {
		return nil
	}
	return a.ring
}

// cardSecurity is what the agent card declares about authentication.
func (a *App) cardSecurity() []a2a.SecurityScheme {
	if !a.authOn {
		return nil
	}
	var out []a2a.SecurityScheme
	for _, s := range a.clients.Schemes() {
		out = append(out, a2a.SecurityScheme{Name: s.Name, Type: s.Type, In: s.In, HeaderName: s.HeaderName,
			Scheme: s.Scheme, BearerFormat: s.BearerFormat, Description: s.Description})
	}
	return out
}

// refusal answers an A2A request refused before it reaches its binding's
// handler, in that binding's shape (jsonrpc.Refuse, rest.Refuse).
type refusal func(c *fiber.Ctx, status int, e *a2a.Error) error

// guardA2A returns the guard of an A2A binding, the same for each: it
// authenticates the request, applies the client's rate limit, and makes
// the request act for the client; refuse answers a refusal.
func (a *App) guardA2A(refuse refusal) fiber.Handler {
	return func(c *fiber.Ctx) error { return a.guard(c, refuse) }
}

func (a *App) guard(c *fiber.Ctx, refuse refusal) error {
	ctx, e := a.admit(c.UserContext(), c.IP(), func(name string) string { return c.Get(name) })
	switch {
	case e == nil:
		c.SetUserContext(ctx)
		return c.Next()
	case e.Kind == a2a.KindUnauthenticated:
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="relay"`)
		return refuse(c, fiber.StatusUnauthorized, e)
	}
	c.Set(fiber.HeaderRetryAfter, "1")
	return refuse(c, fiber.StatusTooManyRequests, e)
}

// admit is the guard of every A2A binding, whatever carries the request
// (header reads its headers or metadata by name; ip is its remote
// address): it authenticates the request, applies the client's rate
// limit, and returns the context that acts for the client, or the refusal
// (KindUnauthenticated, or KindLimited: retry after 1 s).
func (a *App) admit(ctx context.Context, ip string, header func(name string) string) (context.Context, *a2a.Error) {
	owner := ""
	if a.authOn {
		p, err := a.clients.Authenticate(ctx, header)
		if err != nil { // logged, sampled, by the binding's flood limit
			msg := "authentication required: send Authorization: Bearer <API key or JWT>"
			if !errors.Is(err, auth.ErrNoCredentials) {
				msg = "invalid credentials"
			}
			return ctx, a2a.Errorf(a2a.KindUnauthenticated, "%s", msg)
		}
		owner = p.ID
	}
	if a.limiter != nil {
		key := owner
		if key == "" {
			key = "ip:" + ip
		}
		ok, err := a.limiter.Allow(ctx, key, time.Now())
		if err != nil {
			a.log.WarnContext(ctx, "rate limit unavailable", "err", err) // fail open: Redis trouble shows elsewhere
		}
		if !ok {
			return ctx, a2a.Errorf(a2a.KindLimited,
				"rate limit exceeded: %d requests per second per client; retry after 1 s", a.cfg.Security.RateLimit)
		}
	}
	return tenant.With(ctx, owner), nil
}

// grpcGuard is the guard of the gRPC binding: admit behind the same limit
// of failed authentications per remote address as the HTTP bindings'.
type grpcGuard struct{ a *App }

func (g grpcGuard) Admit(ctx context.Context, ip string, header func(name string) string) (context.Context, error) {
	a := g.a
	if a.strikes != nil && a.strikes.Refused(ip, time.Now()) {
		return ctx, a2a.Errorf(a2a.KindLimited, "too many failed authentications from this address; retry after 1 s")
	}
	actx, e := a.admit(ctx, ip, header)
	if e == nil {
		return actx, nil
	}
	if e.Kind == a2a.KindUnauthenticated && a.strikes != nil {
		over, serr := a.strikes.Strike(ctx, ip, time.Now())
		a.authLog.failed(ctx, a.log, ip, "grpc", over, serr)
	}
	return ctx, e
}

// guardAdmin admits the management API's callers: a bearer admin token
// when some are configured; nobody when client authentication is on and
// none are; everybody when relay runs open (RELAY_AUTH=none, the quickstart).
func (a *App) guardAdmin(c *fiber.Ctx) error {
	if a.adminTokens.Empty() {
		if a.authOn {
			return c.Status(fiber.StatusForbidden).JSON(fiber.Map{"error": "the management API is closed: no admin tokens are configured (RELAY_ADMIN_TOKENS)"})
		}
		return c.Next()
	}
	tok, ok := auth.BearerToken(c.Get(fiber.HeaderAuthorization))
	if !ok || !a.adminTokens.Contains(tok) {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="relay admin"`)
		return c.Status(fiber.StatusUnauthorized).JSON(fiber.Map{"error": "the management API needs Authorization: Bearer <admin token>"})
	}
	return c.Next()
}

// heldGate is backpressure that reports how long it held new tasks.
type heldGate struct {
	p *backpressure.Pressure
	m *metrics.Metrics
}

func (g heldGate) Admit(ctx context.Context) (time.Duration, error) {
	held, err := g.p.Admit(ctx)
	g.m.Held(held)
	return held, err
}

// quota holds clients to their storage budgets (RELAY_CLIENT_MAX_STORAGE_BYTES,
// RELAY_CLIENT_MAX_TASKS); nil when neither is set. Without client
// authentication every request acts for the one anonymous principal, which
// then has the budgets.
func (a *App) quota() ingest.Quota {
	s := a.cfg.Security
	if s.ClientMaxStorageBytes == 0 && s.ClientMaxTasks == 0 {
		return nil
	}
	return quota.New(a.store, quota.Config{MaxBytes: int64(s.ClientMaxStorageBytes), MaxTasks: int64(s.ClientMaxTasks),
		Idle: a.cfg.TaskRetention})
}
