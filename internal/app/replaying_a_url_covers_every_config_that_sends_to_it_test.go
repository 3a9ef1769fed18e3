package app

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// A replay by URL covers the configs of every task that send to that URL
// (however its host is spelled), and no other; until bounds the window; the
// bound cuts a replay, which says so, and what it queued of each (task,
// config) pair is that pair's oldest notifications, in order.
func TestReplayingAURLCoversEveryConfigThatSendsToIt(t *testing.T) {
	eachPath(t, testReplayingAURLCoversEveryConfigThatSendsToIt)
}

func testReplayingAURLCoversEveryConfigThatSendsToIt(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelayOn(t, path, func(c *config.Config) { c.ReplayMaxNotifications = 7 })
	since := time.Now().Add(-time.Second)
	send := func(text, url string) (string, []string) {
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message(text, nil),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "c-" + text, "url": url}}}, &res)
		var ids []string
		for range 500 {
			ids = nil
			for _, h := range s.hitsOf(urlPath(url)) {
				if strings.Contains(string(h.body), res.Task.ID) {
					ids = append(ids, h.header.Get("A2A-Notification-Id"))
				}
			}
			if len(ids) == 5 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(ids) != 5 {
			t.Fatalf("task %s: %d notifications, want 5", res.Task.ID, len(ids))
		}
		return res.Task.ID, ids
	}
	taskA, idsA := send("a", s.url("/shared"))
	until := time.Now()
	time.Sleep(5 * time.Millisecond) // (the next commits' stream ids are after until)
	taskB, idsB := send("b", strings.Replace(s.url("/shared"), "http://", "HTTP://", 1))
	send("c", s.url("/other"))
	_ = taskB

	// Up to until: task A's notifications only; both configs are covered.
	status, ans := replay(t, r, map[string]any{"url": s.url("/shared"), "since": rfc3339(since), "until": rfc3339(until)})
	if status != http.StatusAccepted || ans.Queued != 5 || ans.Truncated || ans.Configs != 2 {
		t.Fatalf("replay until: %d %+v, want 5 queued over 2 configs", status, ans)
	}
	hits := s.waitHits(t, "/shared", 15, 10*time.Second)
	if got := idsOf(hits[10:]); !slices.Equal(got, idsA) {
		t.Fatalf("replayed until: %v, want task %s's %v", got, taskA, idsA)
	}
	// The sink saw them before relay finished them: wait until it did, or
	// the next replay finds one still queued (and leaves it, as it should).
	for _, id := range idsA {
		var rec struct{ Status string }
		waitDelivered(t, r, id, &rec)
	}

	// Without until: ten notifications, cut at seven: A's five and B's two oldest.
	status, ans = replay(t, r, map[string]any{"url": s.url("/shared"), "since": rfc3339(since)})
	if status != http.StatusAccepted || ans.Queued != 7 || !ans.Truncated || ans.Max != 7 {
		t.Fatalf("replay: %d %+v, want 7 queued and truncated", status, ans)
	}
	hits = s.waitHits(t, "/shared", 22, 10*time.Second)
	var gotA, gotB []string
	for _, id := range idsOf(hits[15:]) {
		switch {
		case slices.Contains(idsA, id):
			gotA = append(gotA, id)
		case slices.Contains(idsB, id):
			gotB = append(gotB, id)
		default:
			t.Fatalf("replayed %s, not a notification of the URL's tasks", id)
		}
	}
	if !slices.Equal(gotA, idsA) || !slices.Equal(gotB, idsB[:2]) {
		t.Fatalf("replayed %v and %v, want %v and %v", gotA, gotB, idsA, idsB[:2])
	}
	if ans.NextSince == nil {
		t.Fatalf("a cut replay names no time to go on from: %+v", ans)
	}
	// From there, B's three left (and perhaps again one of its first two,
	// committed in the same millisecond), in order.
	status, ans = replay(t, r, map[string]any{"url": s.url("/shared"), "since": rfc3339(*ans.NextSince)})
	if status != http.StatusAccepted || ans.Queued < 3 || ans.Truncated {
		t.Fatalf("replay from nextSince: %d %+v, want B's last three at least", status, ans)
	}
	hits = s.waitHits(t, "/shared", 22+ans.Queued, 10*time.Second)
	rest := idsOf(hits[22:])
	for i, id := range rest {
		if j := slices.Index(idsB, id); j < 0 || (i > 0 && j <= slices.Index(idsB, rest[i-1])) {
			t.Fatalf("replayed from nextSince %v, want B's notifications in order ending with %v", rest, idsB[2:])
		}
	}
	if !slices.Equal(rest[len(rest)-3:], idsB[2:]) {
		t.Fatalf("replayed from nextSince %v, want it to end with %v", rest, idsB[2:])
	}
	if n := len(s.hitsOf("/other")); n != 5 {
		t.Fatalf("/other got %d notifications, want its 5 originals only", n)
	}
}

// urlPath is the path of a sink URL.
func urlPath(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	return rest[strings.Index(rest, "/"):]
}
