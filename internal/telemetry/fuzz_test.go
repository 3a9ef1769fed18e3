package telemetry

import (
	"context"
	"regexp"
	"testing"
)

var wellFormed = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// FuzzContinue feeds any client traceparent to Continue: it never panics,
// and what relay would store and send on is either nothing or a well-formed
// version-00 traceparent of 55 bytes, whatever came in.
func FuzzContinue(f *testing.F) {
	for _, s := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", "\x00-\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tp := TraceParent(Continue(context.Background(), in))
		if tp != "" && !wellFormed.MatchString(tp) {
			t.Fatalf("Continue(%q) carries %q", in, tp)
		}
		if id := TraceID(in); id != "" && len(id) != 32 {
			t.Fatalf("TraceID(%q) = %q", in, id)
		}
	})
}
