package ingest

import (
	"strings"
	"testing"
	"time"

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

// A Committer is built whole or not at all: a missing dependency or a
// limit out of range is an error naming it, and the limits given are the
// ones it enforces from its first commit.
func TestCommitterConfigIsChecked(t *testing.T) {
	t.Parallel()
	store := &taskstore.Store{}
	for _, tc := range []struct {
		name string
		d    CommitterDeps
		cfg  CommitterConfig
		want string
	}{
		{"no store", CommitterDeps{Hub: NewHub()}, CommitterConfig{}, "Store and Hub are required"},
		{"no hub", CommitterDeps{Store: store}, CommitterConfig{}, "Store and Hub are required"},
		{"negative retention", CommitterDeps{Store: store, Hub: NewHub()}, CommitterConfig{Retention: -time.Second}, "Retention"},
		{"negative history", CommitterDeps{Store: store, Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{MaxHistory: -1}}, "MaxHistory"},
		{"negative artifacts", CommitterDeps{Store: store, Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{MaxArtifacts: -1}}, "MaxArtifacts"},
		{"negative run", CommitterDeps{Store: store, Hub: NewHub()}, CommitterConfig{Limits: TaskLimits{Turn: taskstore.TurnLimits{Run: -time.Second}}}, "turn limits"},
		{"negative skill wait", CommitterDeps{Store: store, Hub: NewHub()},
			CommitterConfig{Limits: TaskLimits{SkillTurn: map[string]taskstore.TurnLimits{"slow": {Wait: -time.Second}}}}, `skill "slow"`},
	} {
		if _, err := NewCommitter(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	c := mustCommitter(CommitterDeps{Store: store, Hub: NewHub()},
		CommitterConfig{Limits: TaskLimits{MaxHistory: 3, SkillTurn: map[string]taskstore.TurnLimits{"slow": {Run: time.Minute}}}})
	if c.limits.MaxHistory != 3 || c.limits.MaxArtifacts != 100 || !c.turns || c.retention != 7*24*time.Hour {
		t.Errorf("limits %+v, turns %v, retention %s: want the history limit given, the default artifact limit and retention, and turns timed",
			c.limits, c.turns, c.retention)
	}
}
