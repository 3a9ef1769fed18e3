// Package health keeps the health of relay's webhook endpoints in Redis,
// shared by every relay instance: per endpoint (a webhook URL, across the
// push configs that name it) the successes and failures of a recent window,
// the current run of consecutive failures and when it started, the last
// error, and whether the endpoint is disabled. It disables an endpoint that
// keeps failing (Config.DisableAfterFailures, Config.DisableAfter) and
// enables it again on an operator's call. It POSTs nothing and decides no
// delivery: delivery reports outcomes in batches (Record), reads the
// disabled set (Disabled) and skips those endpoints' notifications.
package health

import (
	"cmp"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

//go:embed lua/record.lua
var recordLua string

//go:embed lua/enable.lua
var enableLua string

//go:embed lua/disabled.lua
var disabledLua string

// disabledSample is how many disabled ids each read of the set checks for
// a record gone (disabled.lua).
const disabledSample = 16

// ErrNotFound: no endpoint has that id (or its health expired).
var ErrNotFound = errors.New("health: no such endpoint")

// Config configures a Store. Zero values take the documented defaults;
// DisableAfterFailures and DisableAfter are used as given (0 turns each
// off).
type Config struct {
	// DisableAfterFailures disables an endpoint after this many
	// consecutive failed attempts (0: never by count).
	DisableAfterFailures int
	// DisableAfter disables an endpoint that has failed without a single
	// success for this long (0: never by time).
	DisableAfter time.Duration
	// AlertEvery is the least time between two "failing" changes of one
	// endpoint (default 1h): a flapping endpoint does not page every time.
	AlertEvery time.Duration
	// Bucket is the length of one window bucket (default 1h) and Buckets
	// how many the window holds (default 24): success rates are over the
	// last Bucket*Buckets.
	Bucket  time.Duration
	Buckets int
	// Keep is how long an enabled endpoint's health outlives its last
	// outcome (default 30 days). A disabled endpoint's is kept for Keep
	// after it was disabled (unless it is enabled before): then it is
	// forgotten, and so enabled (endpoints are any URL a config names, many
	// abandoned: the disabled ones must not pile up forever).
	Keep time.Duration
	// ConfigKeep is how long a push config's health outlives its last
	// outcome (default 7 days; relay passes the longer of the task and
	// the delivery retention, so it goes with its task).
	ConfigKeep time.Duration
}

// Store is the endpoint health in Redis.
type Store struct {
	rdb      redis.UniversalClient
	k        layout.Keys
	cfg      Config
	record   *redis.Script
	enable   *redis.Script
	config   *redis.Script
	disabled *redis.Script
}

// New returns a Store, or an error naming the field out of range.
func New(rdb redis.UniversalClient, k layout.Keys, cfg Config) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("health: rdb is required")
	}
	for name, v := range map[string]time.Duration{"DisableAfter": cfg.DisableAfter, "AlertEvery": cfg.AlertEvery,
		"Bucket": cfg.Bucket, "Keep": cfg.Keep, "ConfigKeep": cfg.ConfigKeep} {
		if v < 0 {
			return nil, fmt.Errorf("health: Config.%s is negative (%s)", name, v)
		}
	}
	if cfg.DisableAfterFailures < 0 || cfg.Buckets < 0 {
		return nil, fmt.Errorf("health: Config.DisableAfterFailures (%d) and Config.Buckets (%d) must not be negative",
			cfg.DisableAfterFailures, cfg.Buckets)
	}
	cfg.AlertEvery = cmp.Or(cfg.AlertEvery, time.Hour)
	cfg.Bucket = cmp.Or(cfg.Bucket, time.Hour)
	cfg.Buckets = cmp.Or(cfg.Buckets, 24)
	cfg.Keep = cmp.Or(cfg.Keep, 30*24*time.Hour)
	cfg.ConfigKeep = cmp.Or(cfg.ConfigKeep, 7*24*time.Hour)
	return &Store{rdb: rdb, k: k, cfg: cfg, record: redis.NewScript(recordLua), enable: redis.NewScript(enableLua),
		config: redis.NewScript(configLua), disabled: redis.NewScript(disabledLua)}, nil
}

// EndpointID names the endpoint of a webhook URL as one owner's configs
// send to it: a hash of the owner and the URL normalized (scheme and host
// lower case, default port, user info and fragment dropped, an empty path
// as "/"), so the push configs of one client that name one receiver share
// its health, and another client's failing configs (a wrong token, say)
// never disable it for this one. A URL that does not parse is hashed as
// given; owner "" (no client authentication) hashes the URL alone.
func EndpointID(owner, raw string) string {
	if u, err := url.Parse(raw); err == nil {
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		if port := u.Port(); (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
			u.Host = u.Hostname()
			if strings.Contains(u.Host, ":") {
				u.Host = "[" + u.Host + "]"
			}
		}
		u.User, u.Fragment, u.RawFragment = nil, "", ""
		if u.Path == "" {
			u.Path = "/"
		}
		raw = u.String()
	}
	if owner != "" { // each client's own endpoint: its failures disable it for that client alone
		raw = owner + "\x00" + raw
	}
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:8])
}

// Outcomes are what one relay saw of one endpoint since its last batch.
type Outcomes struct {
	// ID is EndpointID(Owner, URL); URL is shown as given (without a
	// password); Owner is the client whose configs send to it.
	ID, URL, Owner string
	// OK counts successes, the last at LastOK.
	OK     int64
	LastOK time.Time
	// Failed counts failures, from FirstFailed to LastFailed; LastError
	// is the last one's error.
	Failed                  int64
	FirstFailed, LastFailed time.Time
	LastError               string
	// RunFailed counts the failures after the last success (when OK > 0),
	// the first at RunStart.
	RunFailed int64
	RunStart  time.Time
	// Configs are the push configs that sent to it (at most MaxConfigs
	// are kept per endpoint; Record ignores more).
	Configs []ConfigRef
}

// ConfigRef names a push config: its task and its id.
type ConfigRef struct {
	TaskID   string `json:"taskId"`
	ConfigID string `json:"configId"`
}

// Change is a change of an endpoint's health that an operator hears of.
type Change struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Event is "failing" (its first failure, or its first after a
	// success) or
	// "disabled".
	Event string `json:"event"`
	// Failures is the count of the current failure run, which started at
	// Since.
	Failures int64     `json:"failures"`
	Since    time.Time `json:"-"`
	// Cause is why it was disabled: "failures" (Config.DisableAfterFailures)
	// or "time" (Config.DisableAfter).
	Cause string `json:"cause,omitempty"`
}

// maxError caps the last error stored per endpoint.
const maxError = 512

// Record adds a batch of outcomes to their endpoints' health at now, in
// one round trip, and returns what changed.
func (s *Store) Record(ctx context.Context, now time.Time, batch []Outcomes) ([]Change, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	type endpoint struct {
		ID        string   `json:"id"`
		URL       string   `json:"url"`
		Owner     string   `json:"owner"`
		OK        int64    `json:"ok"`
		LastOK    int64    `json:"lastOk"`
		Fail      int64    `json:"fail"`
		FirstFail int64    `json:"firstFail"`
		LastFail  int64    `json:"lastFail"`
		RunFail   int64    `json:"runFail"`
		RunStart  int64    `json:"runStart"`
		Err       string   `json:"err"`
		Configs   []string `json:"configs"`
	}
	eps := make([]endpoint, len(batch))
	keys := []string{s.k.Endpoints(), s.k.EndpointsDisabled()}
	for i, o := range batch {
		eps[i] = endpoint{ID: o.ID, URL: o.URL, Owner: o.Owner, OK: o.OK, LastOK: msOf(o.LastOK), Fail: o.Failed, FirstFail: msOf(o.FirstFailed),
			LastFail: msOf(o.LastFailed), RunFail: o.RunFailed, RunStart: msOf(o.RunStart), Err: capText(o.LastError),
			Configs: configMembers(o.Configs)}
		keys = append(keys, s.k.EndpointHealth(o.ID), s.k.EndpointConfigs(o.ID))
	}
	args, err := json.Marshal(map[string]any{"now": now.UnixMilli(), "afterFailures": s.cfg.DisableAfterFailures,
		"afterMs": s.cfg.DisableAfter.Milliseconds(), "alertEveryMs": s.cfg.AlertEvery.Milliseconds(),
		"bucketMs": s.cfg.Bucket.Milliseconds(), "buckets": s.cfg.Buckets, "keepMs": s.cfg.Keep.Milliseconds(), "endpoints": eps,
		"configKeepMs": s.cfg.ConfigKeep.Milliseconds(), "maxConfigs": MaxConfigs})
	if err != nil {
		return nil, err
	}
	out, err := s.record.Run(ctx, s.rdb, keys, args).Text()
	if err != nil {
		return nil, fmt.Errorf("health: record outcomes: %w", err)
	}
	var raw []struct {
		Change
		Since int64 `json:"since"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		return nil, fmt.Errorf("health: record outcomes: %w", err)
	}
	changes := make([]Change, len(raw))
	for i, r := range raw {
		changes[i] = r.Change
		changes[i].Since = timeOf(r.Since)
	}
	return changes, nil
}

// Disabled returns the ids of the disabled endpoints (and forgets a few
// whose health expired: disabled.lua).
func (s *Store) Disabled(ctx context.Context) ([]string, error) {
	args, _ := json.Marshal(map[string]any{"sample": disabledSample, "keepMs": s.cfg.Keep.Milliseconds()})
	ids, err := s.disabled.Run(ctx, s.rdb, []string{s.k.EndpointsDisabled(), s.k.EndpointHealth("")}, args).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("health: disabled endpoints: %w", err)
	}
	return ids, nil
}

// IsDisabled tells whether endpoint id is disabled now (Disabled's set, read
// for one id).
func (s *Store) IsDisabled(ctx context.Context, id string) (bool, error) {
	on, err := s.rdb.SIsMember(ctx, s.k.EndpointsDisabled(), id).Result()
	if err != nil {
		return false, fmt.Errorf("health: disabled endpoint: %w", err)
	}
	return on, nil
}

// Enable enables endpoint id again: its deliveries are POSTed again (each
// relay sees it within about a second) and its failure run starts over.
func (s *Store) Enable(ctx context.Context, id string, now time.Time) error {
	if !validID(id) {
		return ErrNotFound
	}
	args, _ := json.Marshal(map[string]any{"id": id, "now": now.UnixMilli(), "keepMs": s.cfg.Keep.Milliseconds()})
	n, err := s.enable.Run(ctx, s.rdb, []string{s.k.EndpointHealth(id), s.k.EndpointsDisabled(), s.k.Endpoints()}, args).Int()
	if err != nil {
		return fmt.Errorf("health: enable endpoint: %w", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// validID tells whether id is one EndpointID makes (16 lower-case hex
// digits): any other id names no endpoint, and reaches no key.
func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func capText(s string) string {
	if len(s) > maxError {
		return strings.ToValidUTF8(s[:maxError], "") + "…"
	}
	return s
}

func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func timeOf(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
