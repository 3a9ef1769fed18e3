package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// replayAnswer is what POST /v1/deliveries/replay answers.
type replayAnswer struct {
	Queued, AlreadyQueued, Configs, Max, TasksGone int
	Truncated                                      bool
	NextSince, UnavailableBefore                   *time.Time
	Error                                          string
}

// replay posts a replay request and decodes the answer.
func replay(t *testing.T, r *relay, body map[string]any) (int, replayAnswer) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(r.url+"/v1/deliveries/replay", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out replayAnswer
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// idsOf lists the notification ids of hits, in order.
func idsOf(hits []hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.header.Get("A2A-Notification-Id")
	}
	return out
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// A receiver whose notifications all went to dead letters gets, from a
// replay of its config since a time, every notification since then, in
// order, with the ids the originals had; again once delivered; and again
// once their delivery records are gone (a replay needs none).
func TestReplayingAConfigResendsItsNotificationsWithTheirIDs(t *testing.T) {
	eachPath(t, testReplayingAConfigResendsItsNotificationsWithTheirIDs)
}

func testReplayingAConfigResendsItsNotificationsWithTheirIDs(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	var healthy atomic.Bool
	s.answer = func(string, int) (int, map[string]string, time.Duration) {
		if healthy.Load() {
			return 200, nil, 0
		}
		return 500, nil, 0
	}
	r := deliveringRelayOn(t, path, func(c *config.Config) {
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 50*time.Millisecond, 100*time.Millisecond, 1
	})
	since := time.Now().Add(-time.Second)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("replay me", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "h", "url": s.url("/r")}}}, &res)
	originals := idsOf(s.waitHits(t, "/r", 5, 10*time.Second))
	for range 200 {
		if len(listDeliveries(t, r, "status=dead")) == 5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if dead := listDeliveries(t, r, "status=dead"); len(dead) != 5 {
		t.Fatalf("dead letters %+v, want 5", dead)
	}
	healthy.Store(true)

	check := func(round int) {
		t.Helper()
		status, ans := replay(t, r, map[string]any{"taskId": res.Task.ID, "configId": "h", "since": rfc3339(since)})
		if status != http.StatusAccepted || ans.Queued != 5 || ans.Truncated || ans.Configs != 1 || ans.UnavailableBefore != nil {
			t.Fatalf("round %d: replay answered %d %+v, want 5 queued", round, status, ans)
		}
		hits := s.waitHits(t, "/r", 5*(round+1), 10*time.Second)
		if got := idsOf(hits[5*round:]); !slices.Equal(got, originals) {
			t.Fatalf("round %d: replayed ids %v, want the originals in order %v", round, got, originals)
		}
		for _, id := range originals {
			var rec struct{ Status string }
			waitDelivered(t, r, id, &rec)
		}
	}
	check(1) // from dead letters
	check(2) // delivered ones
	// The records are gone (expired): the replay makes them again.
	ctx := context.Background()
	for _, id := range originals {
		p := r.app.layout.Partition(res.Task.ID)
		if err := r.app.rdb.Del(ctx, r.app.layout.Record(p, id), r.app.layout.TaskDeliveries(res.Task.ID)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	check(3)
	_, _, metrics := get(t, r.url+"/metrics")
	for _, want := range []string{`relay_replay_notifications_total{result="queued"} 15`, `relay_replays_total{truncated="false"} 3`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
