package ui

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Each row of the endpoints view has a Configs button that expands the
// endpoint to the push configs that send to it: its script reads the
// endpoint (GET /v1/endpoints/{id}, which lists them) and shows each
// config's successes, failures and failures in a row, as text.
func TestTheEndpointsViewExpandsAnEndpointToItsConfigs(t *testing.T) {
	f := testApp()
	_, page := do(t, f, http.MethodGet, "/ui/")
	if !strings.Contains(page, `<span class="sr-only">Push configs</span>`) {
		t.Error("the endpoints table has no column for the configs button")
	}
	src := regexp.MustCompile(`src="(endpoints\.js\?v=[0-9a-f]{16})"`).FindStringSubmatch(page)
	if src == nil {
		t.Fatal("no endpoints script")
	}
	_, js := do(t, f, http.MethodGet, "/ui/"+src[1])
	for _, want := range []string{"api('GET', `endpoints/${encodeURIComponent(e.id)}`)", `(body && body.configs)`,
		`'aria-expanded': String(open.has(e.id))`, `onclick: (ev) => toggle(e, ev.currentTarget)`, `'data-configs-of': e.id`,
		"${c.succeeded} ok, ${c.failed} failed, ${c.consecutiveFailures} in a row"} {
		if !strings.Contains(js, want) {
			t.Errorf("endpoints.js lacks %s", want)
		}
	}
}
