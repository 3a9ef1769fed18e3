package app

import (
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2arelay/relay/internal/config"
)

// Over gRPC too, the extended card is the caller's: alice gets hers, bob
// the common one, a caller without credentials none.
func TestTheExtendedCardOverGRPCIsTheCallers(t *testing.T) {
	t.Parallel()
	checkGRPCExtendedCards(t, false)
}

// A client verifies the card it received over gRPC as ProtoJSON, without
// "signatures", in its RFC 8785 form: that form lacks the v0.3 members
// (url, preferredTransport, additionalInterfaces, protocolVersion,
// security) of the JSON card, and the card's second signature covers it.
func TestTheExtendedCardOverGRPCVerifies(t *testing.T) {
	t.Parallel()
	checkGRPCExtendedCards(t, true)
}

func checkGRPCExtendedCards(t *testing.T, verify bool) {
	r := startTenantRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.PublicURL = "https://relay.example.test"
		c.Agent.ExtendedCard = &config.ExtendedCardConfig{Description: "for members",
			Clients: map[string]config.ClientCardConfig{"alice": {Description: "for alice"}}}
	})
	cl := grpcClient(t, r)
	if _, err := cl.GetExtendedAgentCard(bearer(""), &a2apb.GetExtendedAgentCardRequest{}); err == nil {
		t.Fatal("the extended card was served over gRPC without credentials")
	}
	for key, want := range map[string]string{aliceKey: "for alice", bobKey: "for members"} {
		card, err := cl.GetExtendedAgentCard(bearer(key), &a2apb.GetExtendedAgentCardRequest{})
		if err != nil || card.GetDescription() != want {
			t.Fatalf("extended card: %v, %v; want the description %q", card, err, want)
		}
		if !verify {
			continue
		}
		b, err := protojson.Marshal(card)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := verifyCard(t, r, b); err != nil {
			t.Errorf("the extended card received over gRPC does not verify: %v\n%s", err, b)
		}
	}
}
