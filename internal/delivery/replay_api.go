package delivery

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
)

// replayBody is the body of POST /v1/deliveries/replay.
type replayBody struct {
	TaskID   string `json:"taskId"`
	ConfigID string `json:"configId"`
	URL      string `json:"url"`
	// Since and Until are RFC 3339 times.
	Since string `json:"since"`
	Until string `json:"until"`
}

// replayAnswer is what POST /v1/deliveries/replay answers.
type replayAnswer struct {
	Queued            int        `json:"queued"`
	AlreadyQueued     int        `json:"alreadyQueued"`
	Configs           int        `json:"configs"`
	Truncated         bool       `json:"truncated"`
	Max               int        `json:"max"`
	NextSince         *time.Time `json:"nextSince,omitempty"`
	UnavailableBefore *time.Time `json:"unavailableBefore,omitempty"`
	TasksGone         int        `json:"tasksGone,omitempty"`
}

// maxReplayBody bounds the body of a replay request.
const maxReplayBody = 8 << 10

// replayWindow queues again the notifications of a window (replay.go).
func (a *API) replayWindow(c *fiber.Ctx) error {
	q, msg := decodeReplay(c.Body())
	if msg != "" {
		return apiError(c, fiber.StatusBadRequest, msg)
	}
	res, err := a.replay.Replay(c.UserContext(), q)
	switch {
	case errors.Is(err, ErrReplayInput):
		return apiError(c, fiber.StatusBadRequest, err.Error())
	case errors.Is(err, ErrReplayNotFound):
		return apiError(c, fiber.StatusNotFound, err.Error())
	case err != nil:
		return apiError(c, fiber.StatusServiceUnavailable, "cannot replay now")
	}
	out := replayAnswer{Queued: res.Queued, AlreadyQueued: res.Waiting, Configs: res.Configs, Truncated: res.Truncated,
		Max: a.replay.Max(), TasksGone: res.TasksGone}
	if !res.NextSince.IsZero() {
		n := res.NextSince.UTC()
		out.NextSince = &n
	}
	if !res.UnavailableBefore.IsZero() {
		u := res.UnavailableBefore.UTC()
		out.UnavailableBefore = &u
	}
	return c.Status(fiber.StatusAccepted).JSON(out)
}

// decodeReplay reads a replay request's body; msg says what is wrong with
// it ("" when nothing is).
func decodeReplay(body []byte) (ReplayRequest, string) {
	if len(body) > maxReplayBody {
		return ReplayRequest{}, "the body is too large"
	}
	var b replayBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return ReplayRequest{}, "the body must be a JSON object with taskId and configId, or url, and since (and until)"
	}
	if dec.More() {
		return ReplayRequest{}, "the body must hold one JSON object"
	}
	q := ReplayRequest{TaskID: b.TaskID, ConfigID: b.ConfigID, URL: b.URL}
	var err error
	if b.Since == "" {
		return q, "since is required (an RFC 3339 time)"
	}
	if q.Since, err = time.Parse(time.RFC3339Nano, b.Since); err != nil {
		return q, "since must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"
	}
	if b.Until != "" {
		if q.Until, err = time.Parse(time.RFC3339Nano, b.Until); err != nil {
			return q, "until must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"
		}
	}
	if b.ConfigID != "" && b.TaskID == "" {
		return q, "configId needs a taskId"
	}
	return q, ""
}
