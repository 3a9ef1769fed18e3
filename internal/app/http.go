package app

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/a2a/rest"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/delivery"
	"github.com/a2arelay/relay/internal/ui"
)

// jwksPath is where relay publishes its JWKS.
const jwksPath = "/.well-known/jwks.json"

// standardKeysPath is where relay lists its Standard Webhooks v1a public
// keys ("whpk_"); the JWKS publishes them too, as OKP/Ed25519 JWKs.
const standardKeysPath = "/.well-known/standard-webhooks.json"

// newHTTP builds the fiber app and its routes.
func (a *App) newHTTP(h *jsonrpc.Handler, rh *rest.Handler, card *a2a.Card, api *delivery.API, eps *delivery.EndpointsAPI) *fiber.App {
	f := fiber.New(fiber.Config{
		AppName:               "relay",
		DisableStartupMessage: true,
		BodyLimit:             a.cfg.MaxBodyBytes,
		ReadBufferSize:        16 << 10,
		ReadTimeout:           30 * time.Second,
		// No server-wide write timeout: it would cut SSE streams. Every SSE
		// write has a deadline of its own; other answers are small.
		WriteTimeout: 0,
		IdleTimeout:  2 * time.Minute,
		ErrorHandler: a.errorHandler,
	})
	f.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		a.log.ErrorContext(c.UserContext(), "panic in http handler", "path", c.Path(), "panic", e)
	}}))
	f.Use(a.traceRequests)
	f.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	f.Get("/readyz", a.ready)
	f.Get("/.well-known/agent-card.json", rest.ServeCard(card))
	f.Get("/.well-known/agent.json", rest.ServeCard(card))
	f.Get(jwksPath, auth.ServeJWKSOf(a.keys, a.swhKeys))
	f.Get(standardKeysPath, a.swhKeys.ServeStandardKeys)
	flood := func(refuse refusal) fiber.Handler {
		return a.limitAuthFailures(func(c *fiber.Ctx) error {
			return refuse(c, fiber.StatusTooManyRequests, a2a.Errorf(a2a.KindLimited, "too many failed authentications from this address; retry after 1 s"))
		})
	}
	// The A2A bindings, each behind the same guard, answering in its shape.
	// The HTTP+JSON routes come before the worker API's /v1/tasks/...
	// middleware, which they share a prefix with and never reach.
	rh.Register(f, flood(rest.Refuse), a.guardA2A(rest.Refuse))
	rpcGuard := []fiber.Handler{flood(jsonrpc.Refuse), a.guardA2A(jsonrpc.Refuse)}
	plainFlood := a.limitAuthFailures(func(c *fiber.Ctx) error {
		return c.Status(fiber.StatusTooManyRequests).JSON(fiber.Map{"error": "too many failed authentications from this address; retry after 1 s", "code": "rate_limited"})
	})
	f.Post("/v1/keys/rotate", plainFlood, a.guardAdmin, a.rotateKeys)
	f.Use("/v1/deliveries", plainFlood, a.guardAdmin)
	f.Use("/v1/stats", plainFlood, a.guardAdmin)
	f.Use("/v1/endpoints", plainFlood, a.guardAdmin)
	f.Use("/v1/configs", plainFlood, a.guardAdmin)
	f.Use("/v1/queues", plainFlood) // the worker API (its own guard, workerapi)
	f.Use("/v1/tasks", plainFlood)
	f.Get("/metrics", plainFlood, a.guardAdmin, adaptor.HTTPHandler(promhttp.HandlerFor(a.metrics.Registry(), promhttp.HandlerOpts{})))
	api.Register(f)
	eps.Register(f)
	a.workerAPI.Register(f)
	ui.Register(f) // the operator page at /ui (static files; the API it calls is guarded)
	f.Post("/", append(rpcGuard, h.Serve)...)
	if u, err := url.Parse(a.cfg.PublicURL); err == nil && u.Path != "" && u.Path != "/" {
		f.Post(u.Path, append(rpcGuard, h.Serve)...)
	}
	return f
}

// rotateKeys makes a new signing key current; the previous one stays in the
// JWKS for RELAY_JWT_ROTATE_GRACE. Every instance picks the new key up.
func (a *App) rotateKeys(c *fiber.Ctx) error {
	if err := a.keys.Rotate(c.UserContext()); err != nil {
		return c.Status(fiber.StatusConflict).JSON(fiber.Map{"error": "cannot rotate: " + err.Error()})
	}
	if err := a.swhKeys.Rotate(c.UserContext()); err != nil {
		return c.Status(fiber.StatusConflict).JSON(fiber.Map{"error": "cannot rotate the Standard Webhooks key: " + err.Error()})
	}
	a.log.InfoContext(c.UserContext(), "signing keys rotated", "kid", a.keys.CurrentKID(), "standard_webhooks_kid", a.swhKeys.CurrentKID())
	return c.JSON(fiber.Map{"kid": a.keys.CurrentKID(), "standardWebhooksKid": a.swhKeys.CurrentKID()})
}

// ready answers 200 when Redis answers, 503 otherwise.
func (a *App) ready(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "error": "redis does not answer"})
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// errorHandler answers every error fiber raises (too large a body, an
// unknown route, a panic) with JSON: JSON-RPC shaped on POST, plain otherwise.
func (a *App) errorHandler(c *fiber.Ctx, err error) error {
	code, msg := fiber.StatusInternalServerError, "internal error"
	var fe *fiber.Error
	if errors.As(err, &fe) {
		code, msg = fe.Code, fe.Message
	} else {
		a.log.ErrorContext(c.UserContext(), "http request failed", "path", c.Path(), "err", err)
	}
	if code == fiber.StatusRequestEntityTooLarge {
		msg = "request body exceeds the limit of " + strconv.Itoa(a.cfg.MaxBodyBytes) + " bytes"
	}
	if rest.Owns(c.Path()) {
		return rest.RefuseTransport(c, code, msg)
	}
	// fasthttp forgets the request (its method and path read GET /) when a
	// chunked body runs over the limit: such a request was a POST.
	forgotten := c.Request().Header.Len() == 0
	if c.Method() == fiber.MethodPost || forgotten {
		return jsonrpc.RefuseTransport(c, code, msg)
	}
	return c.Status(code).JSON(fiber.Map{"error": msg})
}
