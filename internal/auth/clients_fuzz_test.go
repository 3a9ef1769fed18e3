package auth

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzAuthenticate feeds arbitrary Authorization and API key header values
// to Clients with an API key and JWTs from a JWKS. Nothing may panic, every
// error must be one of Authenticate's two, and only the known key or a
// token that an independent verifier accepts may authenticate.
func FuzzAuthenticate(f *testing.F) {
	const apiKey = "fuzz-api-key-0123456789"
	clk := newClientClock() // fixed: after the first fetch, no token can cause another
	k := newIssuerKey(f, "ES256", "fuzz")
	srv := newJWKSServer(f, k)
	c := newTestClients(f, ClientConfig{APIKeys: []string{"fuzzer:" + HashAPIKey(apiKey)},
		JWTIssuer: testIssuer, JWTAudience: testAudience, JWTJWKSURL: srv.URL,
		Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
	oracle := jwt.NewParser(jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(testIssuer),
		jwt.WithAudience(testAudience), jwt.WithExpirationRequired(), jwt.WithLeeway(30*time.Second),
		jwt.WithTimeFunc(clk.Now))

	valid := k.mint(f, clk.claims())
	other := clk.claims()
	other["sub"] = "bob|x"
	valid2 := k.mint(f, other)
	for _, seed := range [][2]string{
		{"Bearer " + apiKey, ""}, {"", apiKey}, {"Bearer " + valid, ""}, {"bearer  " + valid2 + " ", ""},
		{"Bearer " + valid, apiKey}, {"Basic YTpi", apiKey}, {"Bearer " + tamper(f, valid), ""},
		{"Bearer a.b.c", ""}, {"Bearer " + valid[:len(valid)-3], ""}, {"Bearer", ""}, {"", ""},
		{"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.", ""}, {"Bearer " + apiKey + "x", " " + apiKey},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, authz, key string) {
		p, err := c.Authenticate(t.Context(), headers("Authorization", authz, "X-API-Key", key))
		if err != nil {
			if !errors.Is(err, ErrNoCredentials) && !errors.Is(err, ErrBadCredentials) {
				t.Fatalf("error of neither kind: %v", err)
			}
			if strings.Contains(err.Error(), apiKey) {
				t.Fatalf("error quotes the API key: %v", err)
			}
			return
		}
		fields := strings.Fields(authz)
		isBearer := len(fields) == 2 && strings.EqualFold(fields[0], "Bearer")
		switch p.Kind {
		case KindAPIKey:
			if p.ID != "key:fuzzer" || (strings.TrimSpace(key) != apiKey && !(isBearer && fields[1] == apiKey)) {
				t.Fatalf("authenticated %+v from Authorization %q, key %q", p, authz, key)
			}
		case KindJWT:
			if !isBearer {
				t.Fatalf("JWT principal %+v without a bearer token: %q", p, authz)
			}
			var cl jwt.RegisteredClaims
			_, err := oracle.ParseWithClaims(fields[1], &cl, func(*jwt.Token) (any, error) { return k.priv.Public(), nil })
			if err != nil || cl.Subject == "" || p.ID != "jwt:"+testIssuer+"|"+cl.Subject {
				t.Fatalf("authenticated %+v from a token the oracle refuses (%v): %q", p, err, authz)
			}
		default:
			t.Fatalf("principal of unknown kind: %+v", p)
		}
	})
}
