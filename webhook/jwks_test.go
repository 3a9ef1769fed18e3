package webhook_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/webhook"
)

func working(tr *testRelay) *note {
	return tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatal(err)
	}
	if tr.hits.Load() != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", tr.hits.Load())
	}
	// Known keys are served from the cache.
	for range 5 {
		if _, err := v.Verify(working(tr).request(t)); err != nil {
			t.Fatal(err)
		}
	}
	if tr.hits.Load() != 1 {
		t.Fatalf("JWKS fetched %d times for a known kid", tr.hits.Load())
	}

	// relay rotates (to another algorithm, even) and signs with the new key
	// at once: the unknown kid makes the verifier fetch the JWKS again.
	tr.clock.Advance(webhook.MinRefetch)
	old := working(tr)
	tr.rotate(auth.EdDSA)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if tr.hits.Load() != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", tr.hits.Load())
	}
	// Notifications signed just before the rotation still verify.
	if _, err := v.Verify(old.request(t)); err != nil {
		t.Fatalf("old key in its grace period: %v", err)
	}
}

func TestRotationWithinMinRefetch(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatal(err)
	}
	tr.rotate(auth.ES256)
	// Too soon after the last fetch: refused, and relay retries later.
	if _, err := v.Verify(working(tr).request(t)); !errors.Is(err, webhook.ErrBadSignature) {
		t.Fatalf("new kid within MinRefetch: %v", err)
	}
	tr.clock.Advance(webhook.MinRefetch)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatalf("relay's retry: %v", err)
	}
}

func TestUnknownKidFlood(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatal(err)
	}
	tr.clock.Advance(webhook.MinRefetch) // the first unknown kid may fetch
	forged := working(tr)
	for i := range 50 {
		forged.signer = newKeys(t, auth.ES256) // a new kid every time
		if _, err := v.Verify(forged.request(t)); !errors.Is(err, webhook.ErrBadSignature) {
			t.Fatalf("forgery %d: %v", i, err)
		}
	}
	if got := tr.hits.Load(); got != 2 {
		t.Fatalf("50 unknown kids fetched the JWKS %d times; want 2 (first use, then once per MinRefetch)", got)
	}
	tr.clock.Advance(webhook.MinRefetch)
	for range 10 {
		forged.signer = newKeys(t, auth.ES256)
		_, _ = v.Verify(forged.request(t))
	}
	if got := tr.hits.Load(); got != 3 {
		t.Fatalf("JWKS fetched %d times, want 3", got)
	}
}

func TestJWKSSingleFlight(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.RS256)
	v := tr.verifier(nil)
	reqs := make([]*http.Request, 20)
	for i := range reqs {
		reqs[i] = working(tr).request(t)
	}
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Go(func() {
			if _, err := v.Verify(r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if tr.hits.Load() != 1 {
		t.Fatalf("20 concurrent first requests fetched the JWKS %d times", tr.hits.Load())
	}
}

func TestJWKSMaxAge(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatal(err)
	}
	// relay serves max-age=300: after that the set is fetched again, and a
	// key relay no longer publishes stops verifying.
	old := tr.signer()
	tr.rotate(auth.ES256)
	tr.mu.Lock()
	tr.published = tr.published[:1]
	tr.mu.Unlock()
	tr.clock.Advance(5*time.Minute + time.Second)
	nt := working(tr)
	nt.signer = old
	if _, err := v.Verify(nt.request(t)); !errors.Is(err, webhook.ErrBadSignature) {
		t.Fatalf("a key dropped from the JWKS: %v", err)
	}
	if tr.hits.Load() != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", tr.hits.Load())
	}
}

func TestJWKSOutageKeepsKeys(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatal(err)
	}
	tr.srv.Close()
	tr.clock.Advance(10 * time.Minute) // the set is stale, and cannot be refetched
	if _, err := v.Verify(working(tr).request(t)); err != nil {
		t.Fatalf("cached keys during a JWKS outage: %v", err)
	}
}

func TestJWKSBadResponses(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not JSON":        `<html>`,
		"no keys":         `{"keys":[]}`,
		"unusable keys":   `{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"a"},{"kty":"EC","crv":"P-384","x":"AA","y":"AA","kid":"b"}]}`,
		"encryption keys": `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"c","use":"enc"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := newTestRelay(t, auth.ES256)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
			t.Cleanup(srv.Close)
			v := tr.verifier(func(c *webhook.Config) { c.JWKSURL = srv.URL + webhook.JWKSPath })
			if _, err := v.Verify(working(tr).request(t)); !errors.Is(err, webhook.ErrKeysUnavailable) {
				t.Fatalf("Verify = %v, want ErrKeysUnavailable", err)
			}
		})
	}
}

func TestJWKSDuplicateKid(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	// Another key claims the current key's kid: the kid is ambiguous and is
	// dropped; a third key keeps the set usable.
	other := newKeys(t, auth.ES256)
	tr.mu.Lock()
	tr.published = append(tr.published, other, newKeys(t, auth.EdDSA))
	tr.mu.Unlock()
	set := strings.ReplaceAll(string(tr.jwks()), other.CurrentKID(), tr.signer().CurrentKID())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(set)) }))
	t.Cleanup(srv.Close)
	v := tr.verifier(func(c *webhook.Config) { c.JWKSURL = srv.URL })
	if _, err := v.Verify(working(tr).request(t)); !errors.Is(err, webhook.ErrBadSignature) {
		t.Fatalf("ambiguous kid: %v", err)
	}
}
