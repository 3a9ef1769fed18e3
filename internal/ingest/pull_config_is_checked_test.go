package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/workqueue"
)

// mustPull is NewPull for deps and a config the test knows are valid.
func mustPull(d PullDeps, cfg PullConfig) *Pull {
	p, err := NewPull(d, cfg)
	if err != nil {
		panic(err)
	}
	return p
}

// The pull backend is built whole or not at all: a missing dependency or
// a negative lease is an error naming it; a zero lease is 30s.
func TestPullConfigIsChecked(t *testing.T) {
	t.Parallel()
	q := &workqueue.Claims{}
	commit := mustCommitter(CommitterDeps{Store: &taskstore.Store{}, Turns: &taskstore.Turns{}, URLs: &taskstore.URLIndex{}, Hub: NewHub()}, CommitterConfig{})
	load := func(context.Context, string) (a2a.TaskView, error) { return a2a.TaskView{}, nil }
	for _, tc := range []struct {
		name string
		d    PullDeps
		cfg  PullConfig
		want string
	}{
		{"no queue", PullDeps{Commit: commit, Load: load}, PullConfig{}, "Queue, Commit and Load are required"},
		{"no committer", PullDeps{Queue: q, Load: load}, PullConfig{}, "Queue, Commit and Load are required"},
		{"no loader", PullDeps{Queue: q, Commit: commit}, PullConfig{}, "Queue, Commit and Load are required"},
		{"negative lease", PullDeps{Queue: q, Commit: commit, Load: load}, PullConfig{Lease: -time.Second}, "Lease"},
	} {
		if _, err := NewPull(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if p := mustPull(PullDeps{Queue: q, Commit: commit, Load: load}, PullConfig{}); p.Lease() != 30*time.Second || p.log == nil {
		t.Errorf("lease %s: want the default 30s, and a logger", p.Lease())
	}
}
