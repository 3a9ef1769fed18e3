package a2a

import (
	"context"
	"log/slog"
	"testing"
)

// A card that does not declare capabilities.extendedAgentCard makes v1.0's
// GetExtendedAgentCard an unsupported operation (§3.3.4), as it is with no
// card at all; v0.3's agent/getAuthenticatedExtendedCard keeps its own
// code, -32007.
func TestAnUndeclaredExtendedCardIsAnUnsupportedOperationInV10(t *testing.T) {
	t.Parallel()
	card, err := NewCard(CardConfig{Name: "n", Description: "d", Version: "1", URL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Card{card, nil} {
		ep, err := NewEndpoint(EndpointDeps{Service: nopService{}, Card: c, Log: slog.New(slog.DiscardHandler)}, StreamConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for d, want := range map[Dialect]Kind{V10: KindUnsupportedOperation, V03: KindExtendedCardNotConfigured} {
			_, _, err := ep.Do(context.Background(), Call{Op: OpExtendedCard, Dialect: d})
			if e, ok := AsError(err); !ok || e.Kind != want {
				t.Errorf("card %v, dialect %v: err %v, want kind %v", c != nil, d, err, want)
			}
		}
	}
}
