package auth

import "testing"

func TestTokens(t *testing.T) {
	set := NewTokens([]string{"worker-token-0123456789", "other-token-9876543210"})
	for tok, want := range map[string]bool{
		"worker-token-0123456789": true, "other-token-9876543210": true,
		"worker-token-012345678": false, "": false,
	} {
		if got := set.Contains(tok); got != want {
			t.Errorf("Contains(%q) = %v, want %v", tok, got, want)
		}
	}
	if set.Empty() || !NewTokens(nil).Empty() || NewTokens(nil).Contains("") {
		t.Fatal("Empty or an empty set's Contains is wrong")
	}
}
