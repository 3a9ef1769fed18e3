package delivery

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A replay sends again every notification a push config was sent (or was
// to be sent: skipped, dead-lettered, lost with its record) in a window of
// time, with the ids their commits gave them, so that a receiver that
// missed some gets them again and dedupes the rest. It needs no delivery
// record: it derives the notifications from what is kept for as long as
// the task is, the task's event stream (one notification per event that
// notifies, per config) and the task's push configs, and names each by
// the rule its commit named it (layout.Keys.NotificationID). It queues
// them through the outbox (outbox.Replay's Requeue), each at the end of its (task,
// config) lane: in order per pair, after what is queued there already.

// ReplayEvents is what a replay reads and writes of the delivery side of
// Redis (outbox.Replay implements it).
type ReplayEvents interface {
	TaskEvents(ctx context.Context, taskID, start, end string, count int) ([]outbox.StoredEvent, error)
	EventsCutBefore(ctx context.Context, taskID string) (time.Time, error)
	Requeue(ctx context.Context, taskID string, notes []outbox.Requeued, now time.Time) (outbox.RequeueResult, error)
}

// ReplayConfigs is what a replay reads of the push configs
// (taskstore.Store implements it).
type ReplayConfigs interface {
	PushConfigs(ctx context.Context, taskID string) (map[string]string, error)
}

// ReplayURLs is what a replay by URL reads of the index of the push configs
// by webhook URL, and drops from it (taskstore.URLIndex implements it).
type ReplayURLs interface {
	URLConfigs(ctx context.Context, rawURL string, until time.Time, max int) ([]taskstore.URLConfig, error)
	URLConfigSince(ctx context.Context, rawURL, taskID, configID string) (time.Time, bool, error)
	ForgetURLConfigs(ctx context.Context, rawURL string, stale []taskstore.URLConfig) error
}

// ReplayObserver is told of each replay (metrics.Metrics implements it).
type ReplayObserver interface {
	Replayed(queued, waiting int, truncated bool)
}

// ReplayerDeps are what a Replayer reads.
type ReplayerDeps struct {
	Events  ReplayEvents
	Configs ReplayConfigs
	URLs    ReplayURLs
}

// ReplayConfig configures a Replayer. Zero values take the defaults.
type ReplayConfig struct {
	// MaxNotifications bounds the notifications one replay queues
	// (default 1000): a replay that would queue more stops there and says
	// so (ReplayResult.Truncated).
	MaxNotifications int
	// Observer is told of each replay (nil: none).
	Observer ReplayObserver
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Replayer replays windows of notifications.
type Replayer struct {
	events  ReplayEvents
	configs ReplayConfigs
	urls    ReplayURLs
	max     int
	obs     ReplayObserver
	now     func() time.Time
}

// maxReplayConfigs bounds the configs a replay by URL reads from the index.
const maxReplayConfigs = 1000

// NewReplayer returns a Replayer over d, or an error naming what is
// missing or out of range.
func NewReplayer(d ReplayerDeps, cfg ReplayConfig) (*Replayer, error) {
	if d.Events == nil || d.Configs == nil || d.URLs == nil {
		return nil, errors.New("delivery: replayer: Events, Configs and URLs are required")
	}
	if cfg.MaxNotifications < 0 {
		return nil, errors.New("delivery: replayer: MaxNotifications must not be negative")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Replayer{events: d.Events, configs: d.Configs, urls: d.URLs, max: cmp.Or(cfg.MaxNotifications, 1000), obs: cfg.Observer, now: now}, nil
}

// Max is the bound of one replay.
func (r *Replayer) Max() int { return r.max }

// ReplayRequest names what to replay: the configs of one task (ConfigID
// "": all of them), or every config that sends to URL; and the window.
type ReplayRequest struct {
	TaskID, ConfigID string
	URL              string
	// Since: events committed at or after it. Until: at or before it
	// (zero: up to now).
	Since, Until time.Time
}

// ReplayResult says what a replay did.
type ReplayResult struct {
	// Queued notifications were queued again; Waiting ones were still
	// queued (pending or retrying) and left as they were.
	Queued, Waiting int
	// Configs is how many push configs the replay covered.
	Configs int
	// Truncated: the bound (ReplayConfig.MaxNotifications, or the configs
	// a URL lists) cut the replay; what was queued is each pair's oldest.
	Truncated bool
	// NextSince, when the notification bound cut the replay: the commit
	// time of the first event left out, from which a replay of the same
	// window goes on (it sends the notifications of events of that very
	// millisecond again: receivers dedupe them).
	NextSince time.Time
	// UnavailableBefore, when not zero: events of the window committed
	// before it are no longer stored (cut from a task's event stream by
	// retention), so their notifications cannot be replayed.
	UnavailableBefore time.Time
	// TasksGone counts tasks a URL's index listed that no longer exist
	// (expired with their events).
	TasksGone int
}

// Errors of Replay the API answers 400 or 404 for.
var (
	ErrReplayInput    = errors.New("invalid replay")
	ErrReplayNotFound = errors.New("nothing to replay")
)

// target is one task's configs a replay covers, with the time each was
// given its URL (zero: unknown).
type target struct {
	taskID  string
	configs []string
	since   map[string]time.Time
	accept  map[string]string // per config: the event classes its filter takes (absent: every one)
}

// Replay queues the notifications q asks for again.
func (r *Replayer) Replay(ctx context.Context, q ReplayRequest) (ReplayResult, error) {
	if err := q.check(); err != nil {
		return ReplayResult{}, err
	}
	if q.Until.IsZero() {
		q.Until = r.now()
	}
	var res ReplayResult
	var targets []target
	var err error
	if q.URL != "" {
		targets, err = r.byURL(ctx, q.URL, q.Until, &res)
	} else {
		targets, err = r.byTask(ctx, q.TaskID, q.ConfigID)
	}
	if err != nil {
		return res, err
	}
	live, err := r.available(ctx, targets, q, &res)
	if err != nil {
		return res, err
	}
	notes, next, err := r.collect(ctx, live, q)
	if err != nil {
		return res, err
	}
	if !next.IsZero() {
		res.Truncated, res.NextSince = true, next
	}
	for _, t := range live {
		if len(notes[t.taskID]) == 0 {
			continue
		}
		got, err := r.events.Requeue(ctx, t.taskID, notes[t.taskID], r.now())
		if err != nil {
			return res, err
		}
		res.Queued += got.Queued
		res.Waiting += got.Waiting
	}
	if r.obs != nil {
		r.obs.Replayed(res.Queued, res.Waiting, res.Truncated)
	}
	return res, nil
}

func (q ReplayRequest) check() error {
	switch {
	case q.URL == "" && q.TaskID == "":
		return fmt.Errorf("%w: give a url, or a taskId (with a configId or not)", ErrReplayInput)
	case q.URL != "" && (q.TaskID != "" || q.ConfigID != ""):
		return fmt.Errorf("%w: give a url or a taskId, not both", ErrReplayInput)
	case q.Since.IsZero():
		return fmt.Errorf("%w: since is required", ErrReplayInput)
	case !q.Until.IsZero() && q.Until.Before(q.Since):
		return fmt.Errorf("%w: until is before since", ErrReplayInput)
	}
	if q.URL != "" {
		if _, err := taskstore.NormalizeURL(q.URL); err != nil {
			return fmt.Errorf("%w: url is not an absolute http(s) URL", ErrReplayInput)
		}
	}
	return nil
}

// byTask is the target of a replay of one task's configs.
func (r *Replayer) byTask(ctx context.Context, taskID, configID string) ([]target, error) {
	cfgs, err := r.configs.PushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	t := target{taskID: taskID, since: map[string]time.Time{}}
	for id, raw := range cfgs {
		if configID != "" && id != configID {
			continue
		}
		t.configs = append(t.configs, id)
		t.setAccept(id, raw)
		if u := configURL(raw); u != "" {
			if at, ok, err := r.urls.URLConfigSince(ctx, u, taskID, id); err != nil {
				return nil, err
			} else if ok {
				t.since[id] = at
			}
		}
	}
	if len(t.configs) == 0 {
		return nil, fmt.Errorf("%w: task %q has no such push config", ErrReplayNotFound, taskID)
	}
	slices.Sort(t.configs)
	return []target{t}, nil
}

// byURL is the targets of a replay of every config that sends to rawURL:
// the index's, checked against the configs stored now (stale ones are
// dropped from the index).
func (r *Replayer) byURL(ctx context.Context, rawURL string, until time.Time, res *ReplayResult) ([]target, error) {
	listed, err := r.urls.URLConfigs(ctx, rawURL, until.Add(sinceSlack), maxReplayConfigs+1)
	if err != nil {
		return nil, err
	}
	if len(listed) > maxReplayConfigs {
		listed, res.Truncated = listed[:maxReplayConfigs], true
	}
	want, _ := taskstore.NormalizeURL(rawURL)
	var out []target
	var stale []taskstore.URLConfig
	byTask := map[string]int{}
	stored := map[string]map[string]string{}
	// A config listed lately may be one being stored (the index is written
	// first): it is neither stale nor its task gone yet.
	young := r.now().Add(-sinceSlack)
	for _, c := range listed {
		cfgs, ok := stored[c.TaskID]
		if !ok {
			if cfgs, err = r.configs.PushConfigs(ctx, c.TaskID); err != nil {
				return nil, err
			}
			stored[c.TaskID] = cfgs
			if gone, err := r.gone(ctx, c.TaskID, cfgs); err != nil {
				return nil, err
			} else if gone && c.Since.Before(young) {
				res.TasksGone++
			}
		}
		raw, ok := cfgs[c.ConfigID]
		if got, err := taskstore.NormalizeURL(configURL(raw)); !ok || err != nil || got != want {
			if c.Since.Before(young) {
				stale = append(stale, c)
			}
			continue
		}
		i, ok := byTask[c.TaskID]
		if !ok {
			i = len(out)
			byTask[c.TaskID] = i
			out = append(out, target{taskID: c.TaskID, since: map[string]time.Time{}})
		}
		out[i].configs = append(out[i].configs, c.ConfigID)
		out[i].since[c.ConfigID] = c.Since
		out[i].setAccept(c.ConfigID, raw)
	}
	if err := r.urls.ForgetURLConfigs(ctx, rawURL, stale); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no push config sends to that url", ErrReplayNotFound)
	}
	return out, nil
}

// gone tells whether task taskID, whose stored configs are cfgs, expired
// (it has neither configs nor events).
func (r *Replayer) gone(ctx context.Context, taskID string, cfgs map[string]string) (bool, error) {
	if len(cfgs) > 0 {
		return false, nil
	}
	_, err := r.events.EventsCutBefore(ctx, taskID)
	if errors.Is(err, outbox.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// configURL is a stored config's URL ("" when it does not decode).
// setAccept notes the event classes config id (stored as raw) takes, when
// its event filter leaves some out.
func (t *target) setAccept(id, raw string) {
	var c struct {
		Options *a2a.WebhookOptions `json:"options"`
	}
	_ = json.Unmarshal([]byte(raw), &c)
	if a := c.Options.Accept(); a != "" {
		if t.accept == nil {
			t.accept = map[string]string{}
		}
		t.accept[id] = a
	}
}

func configURL(raw string) string {
	var c struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal([]byte(raw), &c)
	return c.URL
}

// sinceSlack widens the time a config was given its URL (the URL index's,
// on the clock of the relay that stored the config) towards the past: the
// event stream's ids are on Redis's clock, which may differ, and the event
// that created a task with its config must not be left out. An event a
// little older than the config may be sent to it (a notification it was
// never sent before), which receivers take as any other.
const sinceSlack = time.Minute
