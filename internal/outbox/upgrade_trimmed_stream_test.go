package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

// A long task written by the previous relay has a stream that relay cut
// with MAXLEN ~ (its creation is gone), but every delivered entry carries
// the task after it ('s'). After the upgrade, a webhook that falls behind
// by one version asks TaskAt for a version that is neither current nor a
// checkpoint's (none forms until the stream is a quarter over and no lane
// waits). taskat.lua then folds from '-': no creation and no base, so the
// fold fails (a2a.ErrNoOrigin) and render.go sends the current task
// instead, although the last legacy entry's 's' is an exact base.
func TestTaskAtAfterUpgradeOfATrimmedStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10})
	tk := s.k.Task("up")
	const legacy = 300
	commitV1(t, s, "up", legacy, map[string][]byte{"hook": []byte(`{}`)})
	if err := rdb.Del(ctx, s.k.Lane("up", "hook")).Err(); err != nil { // all delivered before the upgrade
		t.Fatal(err)
	}
	first, err := rdb.XRangeN(ctx, tk.Events, "-", "+", 1).Result()
	if err != nil || len(first) != 1 || first[0].Values["e"] == "e1" {
		t.Fatalf("the previous relay's stream starts at %v, %v: want it cut (no creation)", first, err)
	}
	// This relay commits two versions; the webhook is at the first.
	ids := commitN(t, s, "up", legacy+1, 2, nil)
	at, err := s.TaskAt(ctx, "up", ids[0], legacy+1)
	if err != nil {
		t.Fatal(err)
	}
	exact := at.Snapshot != nil || at.Base != nil || (len(at.Events) > 0 && string(at.Events[0]) == "e1")
	if !exact {
		from := ""
		if len(at.Events) > 0 {
			from = string(at.Events[0])
		}
		t.Fatalf("TaskAt(%d) = no snapshot, no base, %d events from %q: nothing to fold from (the legacy entry of version %d holds its task)",
			legacy+1, len(at.Events), from, legacy)
	}
}
