package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/taskstore"
)

// mustCommitter is NewCommitter for a config the test knows is valid.
func mustCommitter(d CommitterDeps, cfg CommitterConfig) *Committer {
	c, err := NewCommitter(d, cfg)
	if err != nil {
		panic(err)
	}
	return c
}

// turnsOn is the turn bookkeeping of the task store on rdb with keys k, as
// the app wires it beside the store.
func turnsOn(rdb redis.UniversalClient, k layout.Keys) *taskstore.Turns {
	u, err := taskstore.NewTurns(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)})
	if err != nil {
		panic(err)
	}
	return u
}

// urlsOn is the URL index of the task store on rdb with keys k, as the app
// wires it beside the store.
func urlsOn(rdb redis.UniversalClient, k layout.Keys) *taskstore.URLIndex {
	u, err := taskstore.NewURLIndex(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)}, taskstore.URLIndexConfig{})
	if err != nil {
		panic(err)
	}
	return u
}

// A Committer is built whole or not at all: a missing dependency or a
// limit out of range is an error naming it, and the limits given are the
// ones it enforces from its first commit.
func TestCommitterConfigIsChecked(t *testing.T) {
	t.Parallel()
	store, turns, urls := &taskstore.Store{}, &taskstore.Turns{}, &taskstore.URLIndex{}
	for _, tc := range []struct {
		name string
		d    CommitterDeps
		cfg  CommitterConfig
		want string
	}{
		{"no store", CommitterDeps{Hub: NewHub()}, CommitterConfig{}, "Store and Hub are required"},
		{"no hub", CommitterDeps{Store: store}, CommitterConfig{}, "Store and Hub are required"},
		{"no url index", CommitterDeps{Store: store, Turns: turns, Hub: NewHub()}, CommitterConfig{}, "Turns and URLs are required"},
		{"no turns", CommitterDeps{Store: store, URLs: urls, Hub: NewHub()}, CommitterConfig{}, "Turns and URLs are required"},
		{"negative retention", CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()}, CommitterConfig{Retention: -time.Second}, "Retention"},
		{"negative history", CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{MaxHistory: -1}}, "MaxHistory"},
		{"negative artifacts", CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{MaxArtifacts: -1}}, "MaxArtifacts"},
		{"negative run", CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{Turn: taskstore.TurnLimits{Run: -time.Second}}}, "turn limits"},
		{"negative skill wait", CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()},
			CommitterConfig{Limits: TaskLimits{SkillTurn: map[string]taskstore.TurnLimits{"slow": {Wait: -time.Second}}}}, `skill "slow"`},
	} {
		if _, err := NewCommitter(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	c := mustCommitter(CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()},
		CommitterConfig{Limits: TaskLimits{MaxHistory: 3, SkillTurn: map[string]taskstore.TurnLimits{"slow": {Run: time.Minute}}}})
	if c.limits.MaxHistory != 3 || c.limits.MaxArtifacts != 100 || !c.turns || c.retention != 7*24*time.Hour {
		t.Errorf("limits %+v, turns %v, retention %s: want the history limit given, the default artifact limit and retention, and turns timed",
			c.limits, c.turns, c.retention)
	}
}

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
