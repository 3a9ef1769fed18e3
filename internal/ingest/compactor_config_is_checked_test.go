package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

type noCompaction struct{}

func (noCompaction) CompactCandidates(context.Context, int, time.Time) ([][]string, error) {
	return nil, nil
}
func (noCompaction) Compact(context.Context, string, time.Time, taskstore.Fold) (bool, error) {
	return false, nil
}
func (noCompaction) Lead(context.Context, string, string, time.Duration) (bool, error) {
	return false, nil
}

// A Compactor is built whole or not at all: a missing dependency or a
// knob out of range is an error naming it, and zero knobs take their
// defaults (a look a second, 64 streams per partition).
func TestCompactorConfigIsChecked(t *testing.T) {
	t.Parallel()
	ok := CompactorDeps{Store: noCompaction{}, Leader: noCompaction{}, Holder: "h"}
	for _, tc := range []struct {
		name string
		d    CompactorDeps
		cfg  CompactorConfig
		want string
	}{
		{"no store", CompactorDeps{Leader: noCompaction{}, Holder: "h"}, CompactorConfig{}, "Store and Leader are required"},
		{"no leader", CompactorDeps{Store: noCompaction{}, Holder: "h"}, CompactorConfig{}, "Store and Leader are required"},
		{"no holder", CompactorDeps{Store: noCompaction{}, Leader: noCompaction{}}, CompactorConfig{}, "Holder is required"},
		{"negative every", ok, CompactorConfig{Every: -time.Second}, "Every"},
		{"negative batch", ok, CompactorConfig{Batch: -1}, "Batch"},
	} {
		if _, err := NewCompactor(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	c, err := NewCompactor(ok, CompactorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Every != time.Second || c.cfg.Batch != 64 || c.d.Now == nil || c.d.Log == nil {
		t.Errorf("config %+v: want a look a second, 64 streams per partition, a clock and a logger", c.cfg)
	}
}
