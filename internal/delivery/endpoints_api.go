package delivery

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/health"
)

// Endpoints is what the endpoints API needs of the endpoint health
// (health.Store implements it).
type Endpoints interface {
	List(ctx context.Context, now time.Time, limit int) ([]health.Endpoint, error)
	Get(ctx context.Context, id string, now time.Time) (health.Endpoint, error)
	Enable(ctx context.Context, id string, now time.Time) error
	Config(ctx context.Context, taskID, configID string) (health.ConfigHealth, error)
}

// EndpointsAPI is the JSON management API over webhook endpoints' health,
// under /v1/endpoints: list them (success rate, last error, state), read
// one (with the push configs that send to it), enable one again; and one
// push config's health, under /v1/configs.
type EndpointsAPI struct {
	eps Endpoints
	now func() time.Time
}

// NewEndpointsAPI returns the endpoints API.
func NewEndpointsAPI(eps Endpoints) *EndpointsAPI { return &EndpointsAPI{eps: eps, now: time.Now} }

// Register mounts the API on r.
func (a *EndpointsAPI) Register(r fiber.Router) {
	r.Get("/v1/endpoints", a.list)
	r.Get("/v1/endpoints/:id", a.get)
	r.Post("/v1/endpoints/:id/enable", a.enable)
	r.Get("/v1/configs/:task/:config/health", a.config)
}

// endpointJSON is an endpoint as the API shows it: its health, and the
// window its counts are over.
type endpointJSON struct {
	health.Endpoint
	WindowSeconds int64 `json:"windowSeconds"`
}

func endpointOut(e health.Endpoint) endpointJSON {
	return endpointJSON{Endpoint: e, WindowSeconds: int64(e.Window / time.Second)}
}

// list answers the disabled endpoints, then those with the latest
// outcomes, up to ?limit= (default 100, at most 500).
func (a *EndpointsAPI) list(c *fiber.Ctx) error {
	limit := 100
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return apiError(c, fiber.StatusBadRequest, "limit must be a number from 1 to 500")
		}
		limit = n
	}
	eps, err := a.eps.List(c.UserContext(), a.now(), limit)
	if err != nil {
		return apiError(c, fiber.StatusServiceUnavailable, "cannot read endpoints now")
	}
	return c.JSON(fiber.Map{"endpoints": mapSlice(eps, endpointOut)})
}

func (a *EndpointsAPI) get(c *fiber.Ctx) error {
	e, err := a.eps.Get(c.UserContext(), c.Params("id"), a.now())
	if errors.Is(err, health.ErrNotFound) {
		return apiError(c, fiber.StatusNotFound, "no endpoint with that id")
	}
	if err != nil {
		return apiError(c, fiber.StatusServiceUnavailable, "cannot read the endpoint now")
	}
	return c.JSON(endpointOut(e))
}

// enable enables an endpoint again: every relay POSTs its notifications
// again within about a second. Those skipped while it was disabled are not
// sent by this; they can be replayed.
func (a *EndpointsAPI) enable(c *fiber.Ctx) error {
	err := a.eps.Enable(c.UserContext(), c.Params("id"), a.now())
	if errors.Is(err, health.ErrNotFound) {
		return apiError(c, fiber.StatusNotFound, "no endpoint with that id")
	}
	if err != nil {
		return apiError(c, fiber.StatusServiceUnavailable, "cannot enable the endpoint now")
	}
	return c.JSON(fiber.Map{"id": c.Params("id"), "state": "enabled"})
}

// config answers one push config's health: its task and config ids are
// the path's (percent-encoded).
func (a *EndpointsAPI) config(c *fiber.Ctx) error {
	task, err1 := url.PathUnescape(c.Params("task"))
	config, err2 := url.PathUnescape(c.Params("config"))
	if err1 != nil || err2 != nil {
		return apiError(c, fiber.StatusBadRequest, "the task and config ids must be percent-encoded")
	}
	h, err := a.eps.Config(c.UserContext(), task, config)
	if errors.Is(err, health.ErrNotFound) {
		return apiError(c, fiber.StatusNotFound, "no health of that push config (no attempt seen, or expired)")
	}
	if err != nil {
		return apiError(c, fiber.StatusServiceUnavailable, "cannot read the config's health now")
	}
	return c.JSON(h)
}
