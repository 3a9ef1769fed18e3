package rest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
)

// The card has Cache-Control and an ETag (A2A §8.6); an If-None-Match that
// names the ETag, in a list, weakly or as *, gets 304 without a body; one
// that names another ETag gets the card.
func TestTheCardAnswersConditionalRequests(t *testing.T) {
	t.Parallel()
	card, err := a2a.NewCard(a2a.CardConfig{Name: "relay", Description: "d", Version: "1", URL: "https://relay.example.com/", MaxAge: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Get("/card", ServeCard(card))
	do := func(inm string) (*http.Response, string) {
		req := httptest.NewRequest(http.MethodGet, "/card", nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	resp, body := do("")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || !strings.HasPrefix(etag, `"`) || resp.Header.Get("Cache-Control") != "public, max-age=300" || body == "" {
		t.Fatalf("status %d, ETag %q, Cache-Control %q", resp.StatusCode, etag, resp.Header.Get("Cache-Control"))
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if resp, body := do(inm); resp.StatusCode != http.StatusNotModified || body != "" || resp.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: status %d, ETag %q, body %q", inm, resp.StatusCode, resp.Header.Get("ETag"), body)
		}
	}
	if resp, _ := do(`"other"`); resp.StatusCode != 200 {
		t.Errorf("If-None-Match of another ETag: status %d", resp.StatusCode)
	}
}

// A max age of zero (RELAY_AGENT_CARD_MAX_AGE=0, "disables caching") is
// served as max-age=0, not replaced by a default.
func TestAZeroCardMaxAgeIsServed(t *testing.T) {
	t.Parallel()
	card, err := a2a.NewCard(a2a.CardConfig{Name: "relay", Description: "d", Version: "1", URL: "https://relay.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Get("/card", ServeCard(card))
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/card", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=0" {
		t.Fatalf("Cache-Control %q", cc)
	}
}
