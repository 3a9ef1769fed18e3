package health

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Endpoint is one endpoint's health as the management API shows it.
type Endpoint struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Owner is the client whose push configs send to it ("" without
	// client authentication): each client has its own endpoint of a URL.
	Owner string `json:"owner,omitempty"`
	// State is "enabled" or "disabled".
	State string `json:"state"`
	// Succeeded and Failed count the attempts of the window (Window);
	// SuccessRate is Succeeded over both, nil without attempts.
	Succeeded   int64         `json:"succeeded"`
	Failed      int64         `json:"failed"`
	SuccessRate *float64      `json:"successRate"`
	Window      time.Duration `json:"-"`
	// ConsecutiveFailures is the current failure run, since FailingSince.
	ConsecutiveFailures int64      `json:"consecutiveFailures"`
	FailingSince        *time.Time `json:"failingSince,omitempty"`
	LastError           string     `json:"lastError,omitempty"`
	LastErrorAt         *time.Time `json:"lastErrorAt,omitempty"`
	LastSuccess         *time.Time `json:"lastSuccess,omitempty"`
	DisabledAt          *time.Time `json:"disabledAt,omitempty"`
	// DisabledCause is "failures" or "time" (see Change.Cause).
	DisabledCause string `json:"disabledCause,omitempty"`
	// Configs are the push configs last seen sending to it (up to
	// MaxConfigs, the latest first), each with its own health: filled by
	// Get, not by List.
	Configs []ConfigHealth `json:"configs,omitempty"`
}

// List returns up to limit endpoints: every disabled one first, then those
// with the latest outcomes, as of now.
func (s *Store) List(ctx context.Context, now time.Time, limit int) ([]Endpoint, error) {
	limit = max(limit, 1)
	disabled, err := s.Disabled(ctx)
	if err != nil {
		return nil, err
	}
	recent, err := s.rdb.ZRevRange(ctx, s.k.Endpoints(), 0, int64(limit-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("health: list endpoints: %w", err)
	}
	slices.Sort(disabled)
	ids := disabled
	for _, id := range recent {
		if !slices.Contains(disabled, id) {
			ids = append(ids, id)
		}
	}
	ids = ids[:min(len(ids), limit)]
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.k.EndpointHealth(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("health: list endpoints: %w", err)
	}
	out := make([]Endpoint, 0, len(ids))
	for i, c := range cmds {
		switch {
		case len(c.Val()) > 0:
			out = append(out, s.endpoint(ids[i], c.Val(), now))
		case slices.Contains(disabled, ids[i]): // its record evicted: shown, to be enabled
			out = append(out, Endpoint{ID: ids[i], State: "disabled", Window: time.Duration(s.cfg.Buckets) * s.cfg.Bucket})
		}
	}
	return out, nil
}

// Get returns one endpoint's health as of now.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (Endpoint, error) {
	if !validID(id) {
		return Endpoint{}, ErrNotFound
	}
	v, err := s.rdb.HGetAll(ctx, s.k.EndpointHealth(id)).Result()
	if err != nil {
		return Endpoint{}, fmt.Errorf("health: endpoint: %w", err)
	}
	if len(v) == 0 {
		return Endpoint{}, ErrNotFound
	}
	e := s.endpoint(id, v, now)
	if e.Configs, err = s.endpointConfigs(ctx, id); err != nil {
		return Endpoint{}, err
	}
	return e, nil
}

// endpoint reads a health hash.
func (s *Store) endpoint(id string, v map[string]string, now time.Time) Endpoint {
	e := Endpoint{ID: id, URL: v["url"], Owner: v["owner"], State: v["state"], LastError: v["lastErr"], DisabledCause: v["cause"],
		Window: time.Duration(s.cfg.Buckets) * s.cfg.Bucket}
	e.ConsecutiveFailures, _ = strconv.ParseInt(v["consec"], 10, 64)
	oldest := now.UnixMilli()/s.cfg.Bucket.Milliseconds() - int64(s.cfg.Buckets) + 1
	for f, n := range v {
		kind, b, ok := strings.Cut(f, ":")
		bucket, err := strconv.ParseInt(b, 10, 64)
		if !ok || err != nil || bucket < oldest {
			continue
		}
		count, _ := strconv.ParseInt(n, 10, 64)
		switch kind {
		case "ok":
			e.Succeeded += count
		case "fail":
			e.Failed += count
		}
	}
	if total := e.Succeeded + e.Failed; total > 0 {
		r := float64(e.Succeeded) / float64(total)
		e.SuccessRate = &r
	}
	e.FailingSince = timeField(v["since"])
	e.LastErrorAt = timeField(v["lastErrAt"])
	e.LastSuccess = timeField(v["lastOk"])
	e.DisabledAt = timeField(v["disabledAt"])
	if e.State == "" {
		e.State = "enabled"
	}
	return e
}

func timeField(s string) *time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}
