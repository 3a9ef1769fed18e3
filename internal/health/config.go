package health

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/config.lua
var configLua string

// MaxConfigs bounds the configs kept per endpoint (the latest to send to
// it) and listed on its page.
const MaxConfigs = 100

// maxIDLen bounds the task and config ids a health read accepts.
const maxIDLen = 1024

// ConfigOutcomes are what one relay saw of one push config since its last
// batch: Outcomes of its endpoint (ID, URL), counted for the config only.
type ConfigOutcomes struct {
	ConfigRef
	Outcomes
}

// Config is one push config's health as the management API shows it:
// every attempt since it was first seen (kept Config.ConfigKeep after the
// last), not a window.
type ConfigHealth struct {
	ConfigRef
	// EndpointID and URL are the endpoint it last sent to.
	EndpointID string `json:"endpointId"`
	URL        string `json:"url"`
	Succeeded  int64  `json:"succeeded"`
	Failed     int64  `json:"failed"`
	// ConsecutiveFailures is the current failure run, since FailingSince.
	ConsecutiveFailures int64      `json:"consecutiveFailures"`
	FailingSince        *time.Time `json:"failingSince,omitempty"`
	LastError           string     `json:"lastError,omitempty"`
	LastErrorAt         *time.Time `json:"lastErrorAt,omitempty"`
	LastSuccess         *time.Time `json:"lastSuccess,omitempty"`
}

// configMembers names configs as members of an endpoint's configs zset
// (at most MaxConfigs; never nil, which the script could not read).
func configMembers(refs []ConfigRef) []string {
	out := make([]string, 0, min(len(refs), MaxConfigs))
	for _, r := range refs[:min(len(refs), MaxConfigs)] {
		m, _ := json.Marshal([2]string{r.TaskID, r.ConfigID})
		out = append(out, string(m))
	}
	return out
}

// RecordConfigs adds a batch of outcomes to their push configs' health:
// one script call per task partition the batch touches (a config's health
// lives in its task's partition), all in one pipeline; in it a GET and a
// SET per config (lua/config.lua).
func (s *Store) RecordConfigs(ctx context.Context, batch []ConfigOutcomes) error {
	type config struct {
		Endpoint  string `json:"endpoint"`
		URL       string `json:"url"`
		OK        int64  `json:"ok"`
		LastOK    int64  `json:"lastOk"`
		Fail      int64  `json:"fail"`
		FirstFail int64  `json:"firstFail"`
		LastFail  int64  `json:"lastFail"`
		RunFail   int64  `json:"runFail"`
		RunStart  int64  `json:"runStart"`
		Err       string `json:"err"`
	}
	type group struct {
		keys    []string
		configs []config
	}
	groups := map[int]*group{}
	var order []int
	for _, o := range batch {
		p := s.k.Partition(o.TaskID)
		g := groups[p]
		if g == nil {
			g = &group{}
			groups[p] = g
			order = append(order, p)
		}
		g.keys = append(g.keys, s.k.ConfigHealth(o.TaskID, o.ConfigID))
		g.configs = append(g.configs, config{Endpoint: o.ID, URL: o.URL, OK: o.OK, LastOK: msOf(o.LastOK), Fail: o.Failed,
			FirstFail: msOf(o.FirstFailed), LastFail: msOf(o.LastFailed), RunFail: o.RunFailed, RunStart: msOf(o.RunStart),
			Err: capText(o.LastError)})
	}
	calls := make([]scriptCall, 0, len(order))
	for _, p := range order {
		args, err := json.Marshal(map[string]any{"keepMs": s.cfg.ConfigKeep.Milliseconds(), "configs": groups[p].configs})
		if err != nil {
			return err
		}
		calls = append(calls, scriptCall{keys: groups[p].keys, args: string(args)})
	}
	if err := s.runAll(ctx, s.config, calls); err != nil {
		return fmt.Errorf("health: record config outcomes: %w", err)
	}
	return nil
}

type scriptCall struct {
	keys []string
	args string
}

// runAll runs script once per call in one pipeline (by its sha; loaded
// and run again where Redis did not have it).
func (s *Store) runAll(ctx context.Context, script *redis.Script, calls []scriptCall) error {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, c := range calls {
		cmds[i] = script.EvalSha(ctx, pipe, c.keys, c.args)
	}
	_, _ = pipe.Exec(ctx)
	for i, cmd := range cmds {
		err := cmd.Err()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			err = script.Run(ctx, s.rdb, calls[i].keys, calls[i].args).Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Config returns one push config's health.
func (s *Store) Config(ctx context.Context, taskID, configID string) (ConfigHealth, error) {
	if taskID == "" || configID == "" || len(taskID) > maxIDLen || len(configID) > maxIDLen {
		return ConfigHealth{}, ErrNotFound
	}
	vs, err := s.readConfigHealth(ctx, []string{s.k.ConfigHealth(taskID, configID)})
	if err != nil {
		return ConfigHealth{}, fmt.Errorf("health: config: %w", err)
	}
	if len(vs[0]) == 0 {
		return ConfigHealth{}, ErrNotFound
	}
	return configHealth(ConfigRef{TaskID: taskID, ConfigID: configID}, vs[0]), nil
}

// endpointConfigs returns the health of the configs last seen sending to
// endpoint id (up to MaxConfigs, the latest first); a config that has
// since moved to another URL, or whose health expired, is left out.
func (s *Store) endpointConfigs(ctx context.Context, id string) ([]ConfigHealth, error) {
	members, err := s.rdb.ZRevRange(ctx, s.k.EndpointConfigs(id), 0, MaxConfigs-1).Result()
	if err != nil {
		return nil, fmt.Errorf("health: endpoint configs: %w", err)
	}
	refs := make([]ConfigRef, 0, len(members))
	keys := make([]string, 0, len(members))
	for _, m := range members {
		var r [2]string
		if json.Unmarshal([]byte(m), &r) == nil {
			refs = append(refs, ConfigRef{TaskID: r[0], ConfigID: r[1]})
			keys = append(keys, s.k.ConfigHealth(r[0], r[1]))
		}
	}
	vs, err := s.readConfigHealth(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("health: endpoint configs: %w", err)
	}
	out := make([]ConfigHealth, 0, len(refs))
	for i, v := range vs {
		if len(v) > 0 && v["endpoint"] == id {
			out = append(out, configHealth(refs[i], v))
		}
	}
	return out, nil
}

// readConfigHealth reads the health stored at each of keys, as the fields
// of a previous relay's hash (nil where none is stored): one pipeline,
// and a second for the hashes a previous relay wrote, if any. A hash that
// a flush replaced by this relay's form between the two (it is a string
// by then) is read again as one, in a third.
func (s *Store) readConfigHealth(ctx context.Context, keys []string) ([]map[string]string, error) {
	out := make([]map[string]string, len(keys))
	hashes, err := s.getConfigHealth(ctx, keys, out, indexes(len(keys)))
	if err != nil || len(hashes) == 0 {
		return out, err
	}
	pipe := s.rdb.Pipeline()
	all := make([]*redis.MapStringStringCmd, len(hashes))
	for j, i := range hashes {
		all[j] = pipe.HGetAll(ctx, keys[i])
	}
	_, _ = pipe.Exec(ctx) // (each command's error is its own)
	var replaced []int
	for j, i := range hashes {
		switch v, err := all[j].Result(); {
		case err == nil:
			out[i] = v
		case redis.HasErrorPrefix(err, "WRONGTYPE"):
			replaced = append(replaced, i)
		default:
			return nil, err
		}
	}
	if len(replaced) == 0 {
		return out, nil
	}
	// (This relay's form is never replaced by a hash: no fourth read.)
	if _, err := s.getConfigHealth(ctx, keys, out, replaced); err != nil {
		return nil, err
	}
	return out, nil
}

// getConfigHealth reads the health stored at keys[i] for each i of which
// into out[i] (left nil where none is stored) in one pipeline, and returns
// those of which that hold a hash.
func (s *Store) getConfigHealth(ctx context.Context, keys []string, out []map[string]string, which []int) ([]int, error) {
	if len(which) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	gets := make([]*redis.StringCmd, len(which))
	for j, i := range which {
		gets[j] = pipe.Get(ctx, keys[i])
	}
	_, _ = pipe.Exec(ctx)
	var hashes []int
	for j, g := range gets {
		switch v, err := g.Result(); {
		case err == nil:
			out[which[j]], _ = decodeConfigHealth(v)
		case redis.HasErrorPrefix(err, "WRONGTYPE"):
			hashes = append(hashes, which[j])
		case !errors.Is(err, redis.Nil):
			return nil, err
		}
	}
	return hashes, nil
}

// indexes returns 0 .. n-1.
func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// configHealthCodec heads a config's stored health (lua/config.lua writes
// it; a previous relay wrote a hash of the fields decodeConfigHealth
// returns).
const configHealthCodec = "h1"

// decodeConfigHealth reads a config's stored health into the fields of a
// previous relay's hash (false: not of this codec).
func decodeConfigHealth(s string) (map[string]string, bool) {
	head, rest, found := strings.Cut(s, "\n")
	f := strings.Split(head, " ")
	if !found || len(f) != 9 || f[0] != configHealthCodec {
		return nil, false
	}
	le, err1 := strconv.Atoi(f[7])
	lu, err2 := strconv.Atoi(f[8])
	if err1 != nil || err2 != nil || le < 0 || lu < 0 || le+lu > len(rest) {
		return nil, false
	}
	return map[string]string{"ok": f[1], "failed": f[2], "consec": f[3], "since": f[4], "lastErrAt": f[5], "lastOk": f[6],
		"endpoint": rest[:le], "url": rest[le : le+lu], "lastErr": rest[le+lu:]}, true
}

// configHealth reads a config's health (the fields decodeConfigHealth
// returns).
func configHealth(r ConfigRef, v map[string]string) ConfigHealth {
	c := ConfigHealth{ConfigRef: r, EndpointID: v["endpoint"], URL: v["url"], LastError: v["lastErr"]}
	c.Succeeded, _ = strconv.ParseInt(v["ok"], 10, 64)
	c.Failed, _ = strconv.ParseInt(v["failed"], 10, 64)
	c.ConsecutiveFailures, _ = strconv.ParseInt(v["consec"], 10, 64)
	c.FailingSince = timeField(v["since"])
	c.LastErrorAt = timeField(v["lastErrAt"])
	c.LastSuccess = timeField(v["lastOk"])
	return c
}
