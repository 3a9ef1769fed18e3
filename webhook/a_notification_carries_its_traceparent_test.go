package webhook_test

import (
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
)

// A verified notification carries the traceparent relay sent with it, so
// that the receiver can join the task turn's trace; a malformed one is
// left out, and a request without one has none.
func TestANotificationCarriesItsTraceparent(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct{ sent, want string }{
		{tp, tp},
		{"", ""},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", ""},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},
		{tp + "-x", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736x00f067aa0ba902b7-01", ""},
	} {
		tr := newTestRelay(t, auth.ES256)
		nt := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
		if tc.sent != "" {
			nt.header.Set("traceparent", tc.sent)
		}
		n, err := tr.verifier(nil).Verify(nt.request(t))
		if err != nil {
			t.Fatal(err)
		}
		if n.TraceParent != tc.want {
			t.Fatalf("sent %q: TraceParent = %q, want %q", tc.sent, n.TraceParent, tc.want)
		}
	}
}
