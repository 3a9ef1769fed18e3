package app

import (
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// The one error kind the table cannot reach on its shared relay: a
// client over its rate limit is refused as "limited" on every binding
// (JSON-RPC -32029 with HTTP 429; HTTP+JSON 429 RESOURCE_EXHAUSTED; gRPC
// RESOURCE_EXHAUSTED), and each other call of the burst succeeds.
func TestALimitedClientIsRefusedAlikeOnEveryBinding(t *testing.T) {
	t.Parallel()
	bindings := map[string]func(r *relay) binding{
		"JSON-RPC":  func(r *relay) binding { return jsonrpcBinding{url: r.url} },
		"HTTP+JSON": func(r *relay) binding { return restBinding{url: r.url} },
		"gRPC":      func(r *relay) binding { return grpcBinding{c: grpcClient(r.t, r)} },
	}
	for _, name := range []string{"JSON-RPC", "HTTP+JSON", "gRPC"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := startTenantRelay(t, func(c *config.Config) { withGRPC(c); c.Security.RateLimit = 1 })
			b := bindings[name](r)
			limited := 0
			for range 10 { // ten calls in a row against a limit of one a second
				switch _, kind := b.list(aliceKey, eqListArgs{}); kind {
				case "":
				case "limited":
					limited++
				default:
					t.Fatalf("%s: %s", name, kind)
				}
			}
			if limited == 0 {
				t.Fatalf("%s: ten calls at a limit of one a second, none refused", name)
			}
		})
	}
}
