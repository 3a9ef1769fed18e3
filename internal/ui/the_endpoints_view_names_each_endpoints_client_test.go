package ui

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// One webhook URL has an endpoint per client (endpoint health is kept per
// client): each row of the endpoints view names its client beside the URL,
// as text, so that two rows of one URL can be told apart.
func TestTheEndpointsViewNamesEachEndpointsClient(t *testing.T) {
	f := testApp()
	_, page := do(t, f, http.MethodGet, "/ui/")
	src := regexp.MustCompile(`src="(endpoints\.js\?v=[0-9a-f]{16})"`).FindStringSubmatch(page)
	if src == nil {
		t.Fatal("no endpoints script")
	}
	_, js := do(t, f, http.MethodGet, "/ui/"+src[1])
	if !strings.Contains(js, "e.owner ? [' ', h('span', { class: 'owner'") || !strings.Contains(js, "`(${e.owner})`") {
		t.Error("endpoints.js does not show an endpoint's owner beside its URL")
	}
}
