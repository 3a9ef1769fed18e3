package webhook_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/a2arelay/relay/webhook"
)

// A receiver behind Middleware. A stand-in for relay (fakeRelay: it serves a
// JWKS and signs notifications exactly as relay does) posts three
// notifications of a task and then retries the last one, as relay does when
// the receiver's answer got lost: the retry is acknowledged and not
// processed again.
func Example() {
	relay := newFakeRelay()
	defer relay.Close()

	const hookURL = "https://app.example.com/a2a/hook" // as registered in the push config
	v, err := webhook.NewVerifier(webhook.Config{
		Issuer:   relay.Issuer,  // relay's RELAY_PUBLIC_URL
		JWKSURL:  relay.JWKSURL, // by default the Issuer's origin + /.well-known/jwks.json
		Audience: hookURL,
		Token:    "push-token", // the push config's token
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/a2a/hook", v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := webhook.FromContext(r.Context())
		switch n.Kind {
		case webhook.KindArtifactUpdate:
			fmt.Printf("  task %s: artifact %s: %s\n", n.TaskID, n.Artifact.ArtifactID, n.Artifact.Parts[0].Text)
		default:
			fmt.Printf("  task %s: %s (final: %v)\n", n.TaskID, n.State, n.Final)
		}
		// Store or enqueue it, then answer 2xx: that marks n.ID processed.
		w.WriteHeader(http.StatusNoContent)
	})))
	// A real receiver serves the mux: http.ListenAndServe(":8443", mux) behind TLS.

	for _, req := range []*http.Request{
		relay.statusUpdate(hookURL, "push-token", "1.0", "n-1", "working"),
		relay.artifactUpdate(hookURL, "push-token", "1.0", "n-2"),
		relay.statusUpdate(hookURL, "push-token", "1.0", "n-3", "completed"),
		relay.statusUpdate(hookURL, "push-token", "1.0", "n-3", "completed"), // relay's retry
		relay.statusUpdate(hookURL, "wrong-token", "1.0", "n-4", "completed"),
	} {
		fmt.Println(req.Header.Get("A2A-Notification-Id"))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println(strings.TrimRight(fmt.Sprintf("  answered %d %s", rec.Code, strings.TrimSpace(rec.Body.String())), " "))
	}
	// Output:
	// n-1
	//   task task-1: working (final: false)
	//   answered 204
	// n-2
	//   task task-1: artifact report: 42
	//   answered 204
	// n-3
	//   task task-1: completed (final: true)
	//   answered 204
	// n-3
	//   answered 200 already processed
	// n-4
	//   answered 401 webhook: wrong notification token: X-A2A-Notification-Token does not match
}

// Verify and Done in a handler of your own: Verify checks and decodes, Done
// marks the notification processed once it is safely handled.
func ExampleVerifier_Verify() {
	relay := newFakeRelay()
	defer relay.Close()

	const hookURL = "https://app.example.com/hooks/tasks"
	v, err := webhook.NewVerifier(webhook.Config{Issuer: relay.Issuer, JWKSURL: relay.JWKSURL, Audience: hookURL})
	if err != nil {
		log.Fatal(err)
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		n, err := v.Verify(r)
		switch {
		case errors.Is(err, webhook.ErrReplayed):
			w.WriteHeader(http.StatusOK) // handled before: tell relay to stop
			return
		case err != nil:
			http.Error(w, err.Error(), webhook.StatusCode(err))
			return
		}
		// A v0.3 notification is the task after the event.
		fmt.Printf("processing v%s %s %s: %s, %d artifact(s)\n", n.Dialect, n.Kind, n.TaskID, n.State, len(n.Task.Artifacts))
		v.Done(n)
		w.WriteHeader(http.StatusNoContent)
	}

	for _, req := range []*http.Request{
		relay.artifactUpdate(hookURL, "", "0.3", "n-1"),
		relay.artifactUpdate(hookURL, "", "0.3", "n-1"), // relay's retry
		relay.artifactUpdate("https://app.example.com/other", "", "0.3", "n-2"),
	} {
		rec := httptest.NewRecorder()
		handler(rec, req)
		fmt.Println(strings.TrimRight(fmt.Sprintf("answered %d %s", rec.Code, strings.TrimSpace(rec.Body.String())), " "))
	}
	// Output:
	// processing v0.3 task task-1: working, 1 artifact(s)
	// answered 204
	// answered 200
	// answered 401 webhook: wrong audience: aud "https://app.example.com/other" is not this webhook
}
