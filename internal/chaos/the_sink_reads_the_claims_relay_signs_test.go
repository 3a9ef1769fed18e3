package chaos

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/a2arelay/relay/webhook"
)

// The sink checks a notification's JWT claims as relay writes them
// (webhook.Claims, the one definition of the wire contract): jti is the
// notification id, taskId the task.
func TestTheSinkReadsTheClaimsRelaySigns(t *testing.T) {
	t.Parallel()
	c := webhook.Claims{Issuer: "https://relay.example", Audience: "https://hook.example", IssuedAt: 1, ExpiresAt: 2, ID: "n1",
		RelayClaims: webhook.RelayClaims{TaskID: "t1", BodySHA256: "00"}}
	token := "e30." + base64.RawURLEncoding.EncodeToString(c.AppendJSON(nil)) + ".sig"
	if p := checkJWT(token, "n1", "t1"); p != "" {
		t.Fatalf("claims of n1/t1: %s", p)
	}
	if p := checkJWT(token, "n2", "t1"); !strings.Contains(p, "do not match") {
		t.Fatalf("claims of n1 checked against n2: %q, want a mismatch", p)
	}
}
