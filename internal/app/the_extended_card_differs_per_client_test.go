package app

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// The extended card needs credentials on every binding, and each client
// gets its own: alice, configured in agent.extended_card.clients, sees the
// extended skills and hers, with her description; bob sees the common
// extended card. JSON-RPC (v0.3 and v1.0) and HTTP+JSON answer the same
// signed document, which verifies against the JWKS.
func TestTheExtendedCardDiffersPerClient(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) {
		c.PublicURL = "https://relay.example.test"
		c.Agent.ExtendedCard = &config.ExtendedCardConfig{Description: "for members",
			Skills: []config.SkillConfig{{ID: "members", Name: "Members", Description: "d", Tags: []string{"x"}}},
			Clients: map[string]config.ClientCardConfig{"alice": {Description: "for alice",
				Skills: []config.SkillConfig{{ID: "alice-only", Name: "Alice", Description: "d", Tags: []string{"x"}}}}}}
	})
	type card struct {
		Description string
		Skills      []struct{ ID string }
	}
	ids := func(c card) []string {
		var out []string
		for _, s := range c.Skills {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		key, desc string
		skills    []string
	}{
		{aliceKey, "for alice", []string{"echo", "members", "alice-only"}},
		{bobKey, "for members", []string{"echo", "members"}},
	} {
		var docs [][]byte
		for _, method := range []string{"agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"} {
			res := as(r, tc.key, method, map[string]any{})
			if res.Error != nil {
				t.Fatalf("%s: %s", method, res.Error.Message)
			}
			docs = append(docs, res.Result)
		}
		rest := r.rest(http.MethodGet, "/v1/extendedAgentCard", nil, "Authorization", "Bearer "+tc.key)
		if rest.Status != http.StatusOK {
			t.Fatalf("REST: %d %s", rest.Status, rest.Body)
		}
		docs = append(docs, rest.Body)
		// Over HTTP+JSON it is the caller's to cache, revalidated by its ETag.
		etag := rest.Header.Get("ETag")
		if etag == "" || rest.Header.Get("Cache-Control") != "private, no-cache" {
			t.Errorf("REST extended card: ETag %q, Cache-Control %q", etag, rest.Header.Get("Cache-Control"))
		}
		if status, _, body := get(t, r.url+"/v1/extendedAgentCard", "A2A-Version", "1.0", "Authorization", "Bearer "+tc.key,
			"If-None-Match", etag); status != http.StatusNotModified || len(body) != 0 {
			t.Errorf("REST extended card with If-None-Match: %d %s", status, body)
		}
		for i, raw := range docs {
			var c card
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			if c.Description != tc.desc || !slices.Equal(ids(c), tc.skills) {
				t.Errorf("binding %d: %s", i, raw)
			}
			if _, err := verifyCard(t, r, raw); err != nil {
				t.Errorf("binding %d: the extended card does not verify: %v", i, err)
			}
		}
	}
	// Without credentials: refused on every binding, the card not shown.
	for _, method := range []string{"agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"} {
		if res := as(r, "", method, map[string]any{}); res.Error == nil || res.Status != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d %s", method, res.Status, res.Result)
		}
	}
	if res := r.rest(http.MethodGet, "/v1/extendedAgentCard", nil); res.Status != http.StatusUnauthorized {
		t.Errorf("REST without credentials: %d %s", res.Status, res.Body)
	}
}
