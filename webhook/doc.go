// Package webhook is for apps that receive relay's push notifications: it
// verifies that a POST really comes from relay, for this webhook, and was
// not tampered with or replayed, and decodes its body, in any of the three
// A2A dialects, into one model (Notification).
//
// It uses the standard library and github.com/golang-jwt/jwt/v5 only.
// docs/receivers.md says what it checks, for receivers in other languages.
//
// # Use
//
// Make one Verifier per webhook URL, and put its Middleware in front of the
// handler that processes notifications:
//
//	v, err := webhook.NewVerifier(webhook.Config{
//		Issuer:   "https://relay.example.com",        // RELAY_PUBLIC_URL
//		Audience: "https://app.example.com/a2a/hook", // the webhook URL, as registered
//		Token:    os.Getenv("A2A_PUSH_TOKEN"),        // the push config's token, if any
//	})
//	if err != nil { ... }
//	http.Handle("/a2a/hook", v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//		n, _ := webhook.FromContext(r.Context())
//		if err := store(r.Context(), n.ID, n.TaskID, n.State); err != nil {
//			http.Error(w, "try again", http.StatusServiceUnavailable) // relay retries, same n.ID
//			return
//		}
//		w.WriteHeader(http.StatusNoContent)
//	})))
//
// Or call Verify and Done from a handler of your own (any router):
// Verify checks and decodes, Done marks the notification processed.
//
// # Retries and replays
//
// relay delivers each notification at least once: when a webhook does not
// answer 2xx in time it sends the notification again, with the same id
// (A2A-Notification-Id, the JWT's jti) and a fresh JWT. The receiver must
// therefore tell two things apart: relay retrying a notification it has
// not processed yet (to be accepted), and a notification it already
// processed arriving again (to be acknowledged, not processed twice; a
// captured request replayed by an attacker looks the same). So:
//
//   - Verify never records anything. A retry of a notification whose
//     handling failed passes Verify again.
//   - Done(n) records n.ID as processed, for Config.ReplayWindow. Call it
//     after handling succeeded. From then on Verify fails for that id with
//     ErrReplayed.
//   - Middleware calls Done when the handler answered 2xx, answers
//     ErrReplayed with 200 (so relay stops retrying) without running the
//     handler, and answers a retry that arrives while the first attempt is
//     still being handled with 409 (relay tries again later).
//
// The memory is per process and bounded (Config.ReplayCapacity ids):
// receivers with several instances, or that need exactly-once across
// restarts, should also deduplicate on Notification.ID in their database.
// Whatever is remembered, a captured request cannot be replayed after its
// JWT is older than Config.MaxAge.
//
// # Keys
//
// relay signs with ES256 (by default), EdDSA or RS256 and publishes its
// keys at /.well-known/jwks.json, naming the key in the JWT's kid. The
// Verifier fetches the JWKS on first use, again when its Cache-Control
// max-age has passed, and again when a JWT names a kid it does not know
// (relay signs with a new key at once after a rotation), but never twice
// within MinRefetch. A failed fetch keeps the keys already fetched.
//
// # Standard Webhooks
//
// When a push config asks for it (or relay's operator makes it the
// default), relay also signs the Standard Webhooks way: webhook-id,
// webhook-timestamp and webhook-signature, v1 (HMAC-SHA256 under the
// config's whsec_ secret) or v1a (ed25519 under relay's whpk_ keys).
// VerifyStandard checks either; the header names and schemes are the
// constants of standard.go, which relay's sender uses too.
package webhook
