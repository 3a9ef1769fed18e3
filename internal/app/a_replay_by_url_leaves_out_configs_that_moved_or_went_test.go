package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A replay by URL covers the configs that send to it now: one given
// another URL since, or deleted, or whose task expired, is left out, and
// dropped from the URL's index; the expired task is counted.
func TestAReplayByURLLeavesOutConfigsThatMovedOrWent(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	since := time.Now().Add(-time.Second)
	tasks := map[string]string{}
	for _, name := range []string{"a", "b", "c", "d"} {
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message(name, nil),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "c-" + name, "url": s.url("/old")}}}, &res)
		tasks[name] = res.Task.ID
	}
	originals := idsOf(s.waitHits(t, "/old", 20, 10*time.Second))
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": tasks["b"], "id": "c-b", "url": s.url("/new")}, nil)
	r.call("DeleteTaskPushNotificationConfig", map[string]any{"taskId": tasks["c"], "id": "c-c"}, nil)
	if err := r.app.rdb.Del(context.Background(), r.app.store.TaskKeys(tasks["d"])...).Err(); err != nil { // (expired)
		t.Fatal(err)
	}
	// b, c and d were given the URL long enough ago not to be configs
	// being stored now (those are left in the index).
	norm, _ := taskstore.NormalizeURL(s.url("/old"))
	sum := sha256.Sum256([]byte(norm))
	key := r.app.layout.URLConfigs(hex.EncodeToString(sum[:16]))
	for _, name := range []string{"b", "c", "d"} {
		z := redis.Z{Score: float64(time.Now().Add(-2 * time.Minute).UnixMilli()), Member: layout.URLConfigMember(tasks[name], "c-"+name)}
		if n, err := r.app.rdb.ZAddXX(context.Background(), key, z).Result(); err != nil || n != 0 {
			t.Fatalf("backdating %s in the index %s: %d, %v", name, key, n, err)
		}
	}

	status, ans := replay(t, r, map[string]any{"url": s.url("/old"), "since": rfc3339(since)})
	if status != http.StatusAccepted || ans.Queued != 5 || ans.Configs != 1 || ans.TasksGone != 1 {
		t.Fatalf("replay: %d %+v, want task a's 5 over its one config, and task d gone", status, ans)
	}
	hits := s.waitHits(t, "/old", 25, 10*time.Second)
	for _, h := range hits[20:] {
		if !strings.Contains(string(h.body), tasks["a"]) || !slices.Contains(originals, h.header.Get("A2A-Notification-Id")) {
			t.Fatalf("replayed %s, not one of task a's", h.body)
		}
	}
	listed, err := r.app.urls.URLConfigs(context.Background(), s.url("/old"), time.Now().Add(time.Hour), 10)
	if err != nil || len(listed) != 1 || listed[0].TaskID != tasks["a"] || listed[0].ConfigID != "c-a" {
		t.Fatalf("the index of /old lists %+v, %v; want task a's config alone", listed, err)
	}
}
