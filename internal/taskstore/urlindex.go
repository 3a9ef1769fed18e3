package taskstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// The URL index (layout.Keys.URLConfigs) lists, per webhook URL, the push
// configs that send to it, so that an operator can replay every
// notification a URL was sent (internal/delivery, replay.go). Its configs
// belong to tasks of every partition, so its key has a hash tag of its own
// and cannot be written by the task's own scripts, atomically with the
// config. It stays right this way:
//
//   - it is written before the config is stored (IndexPushURL): a config
//     stored is always listed, even when the relay dies between the two;
//   - a member may outlive its config (deleted, given another URL, its task
//     expired, or the store that followed the write failed): readers check
//     each member against the config stored now and drop the stale ones
//     (ForgetURLConfigs), but not a member listed lately: its config may
//     be being stored;
//   - it is bounded by task retention: the key expires at least a horizon
//     (how long a task, and then its notifications' records, can be kept)
//     after its last write, and about one write in urlPruneEvery drops the
//     members older than the horizon and, as a guard, keeps at most
//     urlIndexMax members, the newest. A relay sets the expiry to a
//     horizon and a slack (urlSlack) and, for a slack after that, writes
//     the key without setting it again: a write then is one ZADD. Every
//     write also adds layout.URLConfigsAnchor (NX: once), so the key the
//     relay expects to expire is never emptied (by readers dropping stale
//     members) and created again by its next write without an expiry; a
//     write that finds the anchor missing (its ZADD adds it: the key went
//     meanwhile, deleted, evicted or lost in a failover, and this write
//     made it again) sets the expiry at once.
//
// A member's score is the ms its config was first given the URL: a
// notification of an event committed before then was never sent to it.
// Readers take the members given their URL by a time, newest first.

// URLIndex is the URL index: it lists, per webhook URL, the push configs
// that send to it (see above), for replays by URL. It never stores a push
// config (the Store does, after IndexPushURL) and never sends anything.
type URLIndex struct {
	rdb   redis.UniversalClient
	k     layout.Keys
	batch *groupcommit.Batcher
	// urlHorizon is how long the index keeps a config: a task and then
	// its notifications' records can be kept that long.
	urlHorizon time.Duration
	// urlExtended notes when this relay last set the expiry of each URL
	// index it writes.
	urlExtended urlNotes
}

// URLIndexConfig configures a URLIndex.
type URLIndexConfig struct {
	// Horizon is how long a task, and then its notifications' records, can
	// be kept: the Store's Config.UsageWindow plus its DeliveryRetention
	// (default 14 days). The index keeps a config that long at least.
	Horizon time.Duration
}

// NewURLIndex returns the URL index of d.RDB, named by d.Keys, whose writes
// share round trips through d.Batch, or an error naming what is missing or
// out of range.
func NewURLIndex(d Deps, cfg URLIndexConfig) (*URLIndex, error) {
	if err := d.check("url index", true); err != nil {
		return nil, err
	}
	if cfg.Horizon < 0 {
		return nil, fmt.Errorf("taskstore: url index: Horizon (%s) must not be negative", cfg.Horizon)
	}
	return &URLIndex{rdb: d.RDB, k: d.Keys, batch: d.Batch, urlHorizon: cmp.Or(cfg.Horizon, 14*24*time.Hour)}, nil
}

// urlIndexMax guards the configs the index of one URL lists: far more than
// the horizon holds at the rates relay is measured at for one webhook.
const urlIndexMax = 10_000_000

// URLConfig is a push config the URL index lists.
type URLConfig struct {
	TaskID, ConfigID string
	// Since is when the config was first given the URL.
	Since time.Time
}

// NormalizeURL is the form of a webhook URL the index is keyed by: scheme
// and host in lower case, the scheme's default port dropped, an empty path
// made "/", the fragment dropped (it is never sent). It fails on a URL that
// does not parse as an absolute http(s) URL.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("taskstore: webhook url: %w", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("taskstore: webhook url %q is not an absolute http(s) URL", raw)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	if port != "" {
		u.Host += ":" + port
	}
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// urlHash is the name part of a URL's index key.
func urlHash(raw string) (string, error) {
	n, err := NormalizeURL(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:16]), nil
}

// IndexPushURL lists config configID of task taskID under its webhook URL
// rawURL; it is called before the config is stored (see above), in a round
// trip shared with other commands: a ZADD, with a PEXPIRE when this relay
// has not set the key's expiry for a slack, or (in a round trip of its
// own) when the ZADD made the key again (see above). A config listed
// already keeps its first time. A URL that does not normalize is not
// listed (no webhook is sent to it either: configs are validated before
// they are stored).
func (s *URLIndex) IndexPushURL(ctx context.Context, rawURL, taskID, configID string, now time.Time) error {
	h, err := urlHash(rawURL)
	if err != nil {
		return nil
	}
	key, member := s.k.URLConfigs(h), layout.URLConfigMember(taskID, configID)
	slack := urlSlack(s.urlHorizon)
	extend := s.urlExtended.due(h, now, slack)
	var cmds []redis.Cmder
	var added *redis.IntCmd
	s.batch.Do(func(pipe redis.Pipeliner) {
		added = pipe.ZAddNX(ctx, key, redis.Z{Score: float64(now.UnixMilli()), Member: member},
			redis.Z{Score: math.Inf(1), Member: layout.URLConfigsAnchor})
		cmds = append(cmds, added)
		if extend {
			cmds = append(cmds, pipe.PExpire(ctx, key, s.urlHorizon+slack))
		}
		if prunes(member) {
			cmds = append(cmds,
				pipe.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(now.Add(-s.urlHorizon).UnixMilli(), 10)),
				pipe.ZRemRangeByRank(ctx, key, 0, -urlIndexMax-1))
		}
	})
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			if extend {
				s.urlExtended.forget(h) // the next write sets it
			}
			return fmt.Errorf("taskstore: index push url: %w", err)
		}
	}
	if !extend && added.Val() == 2 {
		// The anchor was missing too: the key went since this relay set
		// its expiry (deleted, evicted, lost in a failover), and this
		// write made it again, without one.
		if err := s.rdb.PExpire(ctx, key, s.urlHorizon+slack).Err(); err != nil {
			s.urlExtended.forget(h) // the next write sets it
			return fmt.Errorf("taskstore: index push url: %w", err)
		}
		s.urlExtended.note(h, now)
	}
	return nil
}

// urlSlack is how long after setting a URL index's expiry a relay writes
// it without setting it again: a sixteenth of the horizon, at most an
// hour (the index is kept that much longer than the horizon at most).
func urlSlack(horizon time.Duration) time.Duration { return min(horizon/16, time.Hour) }

// urlNotesMax bounds the URL indexes whose expiry a relay remembers (past
// it, those noted longest ago are forgotten: their next write sets it).
const urlNotesMax = 4096

// urlNotes remembers when this relay last set the expiry of each URL
// index (by URL hash).
type urlNotes struct {
	mu sync.Mutex
	at map[string]time.Time
}

// due tells whether the write at now of the index of URL hash h sets its
// expiry (none set by this relay within slack before now), and if so
// notes now.
func (n *urlNotes) due(h string, now time.Time, slack time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if at, ok := n.at[h]; ok && !now.Before(at) && now.Sub(at) < slack {
		return false
	}
	if n.at == nil {
		n.at = map[string]time.Time{}
	}
	if len(n.at) >= urlNotesMax {
		for k, at := range n.at {
			if now.Sub(at) >= slack || now.Before(at) {
				delete(n.at, k)
			}
		}
		if len(n.at) >= urlNotesMax {
			clear(n.at)
		}
	}
	n.at[h] = now
	return true
}

// note notes that the expiry of the index of URL hash h was set at now.
func (n *urlNotes) note(h string, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.at == nil {
		n.at = map[string]time.Time{}
	}
	n.at[h] = now
}

func (n *urlNotes) forget(h string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.at, h)
}

// urlPruneEvery: about one write in this many prunes its URL's index (the
// members the write names decide which, so that each URL's own writes
// prune it, however rarely it is written).
const urlPruneEvery = 32

// prunes tells whether the write of member prunes its index.
func prunes(member string) bool {
	h := fnv.New32a()
	h.Write([]byte(member))
	return h.Sum32()%urlPruneEvery == 0
}

// URLConfigs lists up to max configs of the URL index of rawURL given the
// URL at or before until, newest first, as the index has them (some may be
// stale: see above).
func (s *URLIndex) URLConfigs(ctx context.Context, rawURL string, until time.Time, max int) ([]URLConfig, error) {
	h, err := urlHash(rawURL)
	if err != nil {
		return nil, err
	}
	zs, err := s.rdb.ZRevRangeByScoreWithScores(ctx, s.k.URLConfigs(h), &redis.ZRangeBy{
		Max: strconv.FormatInt(until.UnixMilli(), 10), Min: "-inf", Count: int64(max)}).Result()
	if err != nil {
		return nil, fmt.Errorf("taskstore: read url index: %w", err)
	}
	out := make([]URLConfig, 0, len(zs))
	for _, z := range zs {
		m, _ := z.Member.(string)
		if t, c, ok := layout.ParseURLConfigMember(m); ok {
			out = append(out, URLConfig{TaskID: t, ConfigID: c, Since: time.UnixMilli(int64(z.Score))})
		}
	}
	return out, nil
}

// URLConfigSince tells when config configID of task taskID was first given
// the URL rawURL (false: the index does not list it).
func (s *URLIndex) URLConfigSince(ctx context.Context, rawURL, taskID, configID string) (time.Time, bool, error) {
	h, err := urlHash(rawURL)
	if err != nil {
		return time.Time{}, false, err
	}
	ms, err := s.rdb.ZScore(ctx, s.k.URLConfigs(h), layout.URLConfigMember(taskID, configID)).Result()
	if err == redis.Nil {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("taskstore: read url index: %w", err)
	}
	return time.UnixMilli(int64(ms)), true, nil
}

// ForgetURLConfigs drops stale configs from the URL index of rawURL.
func (s *URLIndex) ForgetURLConfigs(ctx context.Context, rawURL string, stale []URLConfig) error {
	if len(stale) == 0 {
		return nil
	}
	h, err := urlHash(rawURL)
	if err != nil {
		return err
	}
	ms := make([]any, len(stale))
	for i, c := range stale {
		ms[i] = layout.URLConfigMember(c.TaskID, c.ConfigID)
	}
	if err := s.rdb.ZRem(ctx, s.k.URLConfigs(h), ms...).Err(); err != nil {
		return fmt.Errorf("taskstore: prune url index: %w", err)
	}
	return nil
}
