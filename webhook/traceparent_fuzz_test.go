package webhook

import (
	"regexp"
	"testing"
)

// FuzzTraceParent: whatever header comes in, the notification carries it
// unchanged only when it is a well-formed version-00 traceparent.
func FuzzTraceParent(f *testing.F) {
	for _, s := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		f.Add(s)
	}
	form := regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)
	f.Fuzz(func(t *testing.T, in string) {
		got := traceParent(in)
		if got != "" && (got != in || !form.MatchString(got)) {
			t.Fatalf("traceParent(%q) = %q", in, got)
		}
		if got == "" && form.MatchString(in) && in[3:35] != "00000000000000000000000000000000" && in[36:52] != "0000000000000000" {
			t.Fatalf("traceParent refused the well-formed %q", in)
		}
	})
}
