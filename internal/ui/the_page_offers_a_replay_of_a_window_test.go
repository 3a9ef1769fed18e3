package ui

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The page has a form that replays a window: by webhook URL or task (and
// config), since a time that is required, until one that is not; its
// script posts it to the management API's replay as JSON and tells what
// the answer says (queued, the bound, what is no longer stored).
func TestThePageOffersAReplayOfAWindow(t *testing.T) {
	f := testApp()
	_, page := do(t, f, http.MethodGet, "/ui/")
	for _, want := range []string{`<form id="replay"`, `id="r-url" name="url" type="url"`, `id="r-task"`, `id="r-config"`,
		`id="r-since" name="since" type="datetime-local" step="1" required`, `id="r-until" name="until" type="datetime-local"`,
		`id="replay-msg"`, `id="replay-error"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	src := regexp.MustCompile(`src="(app\.js\?v=[0-9a-f]{16})"`).FindStringSubmatch(page)
	if src == nil {
		t.Fatal("no script")
	}
	_, js := do(t, f, http.MethodGet, "/ui/"+src[1])
	for _, want := range []string{`api('POST', 'deliveries/replay', null, body)`, `$('replay').addEventListener('submit', replay)`,
		`init.body = JSON.stringify(json)`, `r.truncated`, `r.nextSince`, `r.unavailableBefore`, `r.alreadyQueued`} {
		if !strings.Contains(js, want) {
			t.Errorf("script lacks %s", want)
		}
	}
}
