package webhook

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Claims.AppendJSON writes the bytes json.Marshal writes for the claims,
// strings that need escapes (HTML characters, U+2028, invalid UTF-8,
// controls) included: a receiver that checks the JWT sees what it saw.
func TestClaimsJSONIsWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	samples := []string{"", "https://relay.example", "http://127.0.0.1:8080/hook?a=1&b=<2>", "quote \" back \\",
		"line\n\ttab", "\u2028\u2029", "héllo", "bad \xff", "\x00\x7f", "0123456789abcdef"}
	r := rand.New(rand.NewPCG(7, 7))
	pick := func() string { return samples[r.IntN(len(samples))] }
	for range 2000 {
		c := &Claims{Issuer: pick(), Audience: pick(), IssuedAt: r.Int64N(4e9) - 1e9, ExpiresAt: r.Int64(),
			ID: pick(), RelayClaims: RelayClaims{TaskID: pick(), BodySHA256: pick()}}
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.AppendJSON([]byte("x")); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendJSON = %s\njson.Marshal = %s", got, want)
		}
	}
}
