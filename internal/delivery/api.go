package delivery

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/outbox"
)

// Records is what the management API needs of the delivery records
// (outbox.Records implements it).
type Records interface {
	Delivery(ctx context.Context, id string) (outbox.DeliveryRecord, error)
	ListDeliveries(ctx context.Context, f outbox.DeliveryFilter) ([]outbox.DeliveryRecord, *outbox.IndexEntry, error)
	Redeliver(ctx context.Context, id string, now time.Time) error
	Redrive(ctx context.Context, taskID string, now time.Time) (int, error)
}

// Outcomes is what the management API reads of the delivery outcomes per
// minute (outbox.Stats implements it).
type Outcomes interface {
	DeliveryStats(ctx context.Context, now time.Time, minutes int) ([]outbox.MinuteStats, error)
}

// API is the JSON management API over delivery records, under /v1/deliveries.
type API struct {
	rec      Records
	outcomes Outcomes
	replay   *Replayer
	now      func() time.Time
}

// NewAPI returns the management API over rec and stats; replay serves POST
// /v1/deliveries/replay (nil: not served).
func NewAPI(rec Records, stats Outcomes, replay *Replayer) *API {
	return &API{rec: rec, outcomes: stats, replay: replay, now: time.Now}
}

// Register mounts the API on r.
func (a *API) Register(r fiber.Router) {
	r.Get("/v1/deliveries", a.list)
	r.Post("/v1/deliveries/redrive", a.redrive)
	if a.replay != nil {
		r.Post("/v1/deliveries/replay", a.replayWindow)
	}
	r.Get("/v1/deliveries/:id", a.get)
	r.Post("/v1/deliveries/:id/redeliver", a.redeliver)
	r.Get("/v1/stats/deliveries", a.stats)
}

// stats answers the delivery outcomes per minute of the last ?minutes=
// (default 60, at most 1440), oldest first.
func (a *API) stats(c *fiber.Ctx) error {
	n := 60
	if v := c.Query("minutes"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 1440 {
			return apiError(c, fiber.StatusBadRequest, "minutes: a whole number from 1 to 1440")
		}
	}
	st, err := a.outcomes.DeliveryStats(c.UserContext(), a.now(), n)
	if err != nil {
		return apiError(c, fiber.StatusServiceUnavailable, "cannot read delivery stats now")
	}
	return c.JSON(fiber.Map{"minutes": st})
}

// deliveryJSON is a delivery record as the API shows it.
type deliveryJSON struct {
	ID          string            `json:"id"`
	TaskID      string            `json:"taskId"`
	ConfigID    string            `json:"configId"`
	EventID     string            `json:"eventId"`
	Status      string            `json:"status"`
	Attempts    int               `json:"attempts"`
	Created     time.Time         `json:"created"`
	Updated     time.Time         `json:"updated"`
	NextAttempt *time.Time        `json:"nextAttempt,omitempty"`
	AttemptLog  []json.RawMessage `json:"attemptLog,omitempty"`
}

func toJSON(r outbox.DeliveryRecord, withAttempts bool) deliveryJSON {
	d := deliveryJSON{ID: r.ID, TaskID: r.TaskID, ConfigID: r.ConfigID, EventID: r.EventID, Status: r.Status,
		Attempts: r.Attempts, Created: r.Created.UTC(), Updated: r.Updated.UTC()}
	if !r.Next.IsZero() {
		n := r.Next.UTC()
		d.NextAttempt = &n
	}
	if withAttempts {
		d.AttemptLog = make([]json.RawMessage, len(r.AttemptLog))
		for i, b := range r.AttemptLog {
			d.AttemptLog[i] = b
		}
	}
	return d
}

func apiError(c *fiber.Ctx, status int, msg string) error {
	return c.Status(status).JSON(fiber.Map{"error": msg})
}

func (a *API) list(c *fiber.Ctx) error {
	f := outbox.DeliveryFilter{TaskID: c.Query("task"), ConfigID: c.Query("config"), Status: c.Query("status"), Limit: 50}
	if f.Status != "" && !slices.Contains(outbox.DeliveryStatuses, f.Status) {
		return apiError(c, fiber.StatusBadRequest, "status must be one of "+strings.Join(outbox.DeliveryStatuses, ", "))
	}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return apiError(c, fiber.StatusBadRequest, "limit must be a number from 1 to 500")
		}
		f.Limit = n
	}
	if cur := c.Query("cursor"); cur != "" {
		e, ok := decodeCursor(cur)
		if !ok {
			return apiError(c, fiber.StatusBadRequest, "cursor is not one this API issued")
		}
		f.Cursor = &e
	}
	recs, next, err := a.rec.ListDeliveries(c.UserContext(), f)
	if errors.Is(err, outbox.ErrNeedsTask) {
		return apiError(c, fiber.StatusBadRequest, err.Error())
	}
	if err != nil {
		return err
	}
	out := fiber.Map{"deliveries": mapSlice(recs, func(r outbox.DeliveryRecord) deliveryJSON { return toJSON(r, false) })}
	if next != nil {
		out["nextCursor"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(next.Score, 10) + ":" + next.TaskID))
	}
	return c.JSON(out)
}

func decodeCursor(s string) (outbox.IndexEntry, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return outbox.IndexEntry{}, false
	}
	score, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(score, 10, 64)
	return outbox.IndexEntry{Score: n, TaskID: id}, ok && err == nil && id != ""
}

func (a *API) get(c *fiber.Ctx) error {
	r, err := a.rec.Delivery(c.UserContext(), c.Params("id"))
	if errors.Is(err, outbox.ErrNotFound) {
		return apiError(c, fiber.StatusNotFound, "no delivery with that id")
	}
	if err != nil {
		return err
	}
	return c.JSON(toJSON(r, true))
}

func (a *API) redeliver(c *fiber.Ctx) error {
	err := a.rec.Redeliver(c.UserContext(), c.Params("id"), a.now())
	if errors.Is(err, outbox.ErrNotFound) {
		return apiError(c, fiber.StatusNotFound, "no delivery with that id")
	}
	if errors.Is(err, outbox.ErrQueued) {
		return apiError(c, fiber.StatusConflict, "the delivery is still pending or retrying: it will be delivered without a redelivery")
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"id": c.Params("id"), "status": "pending"})
}

func (a *API) redrive(c *fiber.Ctx) error {
	n, err := a.rec.Redrive(c.UserContext(), c.Query("task"), a.now())
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"redriven": n})
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
