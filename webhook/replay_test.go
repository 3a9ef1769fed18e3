package webhook_test

import (
	"errors"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/webhook"
)

func TestReplay(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(func(c *webhook.Config) { c.ReplayWindow = time.Hour })
	nt := tr.note(a2a.V03, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))

	// relay retries a notification the receiver failed: same id, each time
	// accepted until Done.
	for range 2 {
		if _, err := v.Verify(nt.request(t)); err != nil {
			t.Fatalf("a retry before Done: %v", err)
		}
	}
	n, err := v.Verify(nt.request(t))
	if err != nil {
		t.Fatal(err)
	}
	v.Done(n)
	if _, err := v.Verify(nt.request(t)); !errors.Is(err, webhook.ErrReplayed) {
		t.Fatalf("the same request after Done: %v, want ErrReplayed", err)
	}
	// A later retry by relay (fresh JWT, same id) is a replay too.
	tr.clock.Advance(10 * time.Minute)
	fresh := tr.note(a2a.V03, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	fresh.id, fresh.claims["jti"] = nt.id, nt.id
	if _, err := v.Verify(fresh.request(t)); !errors.Is(err, webhook.ErrReplayed) {
		t.Fatalf("relay's retry after Done: %v, want ErrReplayed", err)
	}
	// Other notifications pass.
	if _, err := v.Verify(tr.note(a2a.V03, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking)).request(t)); err != nil {
		t.Fatal(err)
	}
	// After the window, the id is forgotten (the JWT must still be fresh).
	tr.clock.Advance(time.Hour)
	fresh = tr.note(a2a.V03, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	fresh.id, fresh.claims["jti"] = nt.id, nt.id
	if _, err := v.Verify(fresh.request(t)); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	v.Done(nil) // harmless
}

func TestReplayDisabled(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(func(c *webhook.Config) { c.ReplayWindow = -1 })
	nt := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	n, err := v.Verify(nt.request(t))
	if err != nil {
		t.Fatal(err)
	}
	v.Done(n)
	if _, err := v.Verify(nt.request(t)); err != nil {
		t.Fatalf("replay memory is off: %v", err)
	}
}
