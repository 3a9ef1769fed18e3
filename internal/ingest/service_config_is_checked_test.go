package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// mustService is NewService for deps and a config the test knows are valid.
func mustService(d ServiceDeps, cfg Config) *Service {
	s, err := NewService(d, cfg)
	if err != nil {
		panic(err)
	}
	return s
}

// A Service is built whole or not at all: a missing dependency or a
// negative bound is an error naming it; zero bounds take their defaults.
func TestServiceConfigIsChecked(t *testing.T) {
	t.Parallel()
	store, turns, urls := &taskstore.Store{}, &taskstore.Turns{}, &taskstore.URLIndex{}
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turns, URLs: urls, Hub: NewHub()}, CommitterConfig{})
	ok := ServiceDeps{Store: store, Commit: commit, Hub: NewHub(), Agent: idleAgent{}}
	for _, tc := range []struct {
		name string
		d    ServiceDeps
		cfg  Config
		want string
	}{
		{"no store", ServiceDeps{Commit: commit, Hub: NewHub(), Agent: idleAgent{}}, Config{}, "Store, Commit, Hub and Agent are required"},
		{"no agent", ServiceDeps{Store: store, Commit: commit, Hub: NewHub()}, Config{}, "Store, Commit, Hub and Agent are required"},
		{"negative blocking timeout", ok, Config{BlockingTimeout: -time.Second}, "BlockingTimeout"},
		{"negative list count", ok, Config{ListCountMax: -1}, "ListCountMax"},
	} {
		if _, err := NewService(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	s := mustService(ok, Config{})
	if s.cfg.BlockingTimeout != 30*time.Second || s.cfg.MaxPushConfigs != 16 || s.cfg.ListCountMax != 2000 || s.log == nil {
		t.Errorf("config %+v: want the defaults and a logger", s.cfg)
	}
}
