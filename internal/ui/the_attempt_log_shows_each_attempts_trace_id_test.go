package ui

import (
	"regexp"
	"testing"
)

// The attempts table shows the trace id an attempt records (traceId, when
// relay traces), so that an operator can find the task turn's trace. (The
// page is not rendered here: this reads that the attempt row uses the
// field, as text.)
func TestTheAttemptLogShowsEachAttemptsTraceID(t *testing.T) {
	b, err := files.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?s)function attemptRow\(a, isOpen\) \{.*?\n  \}\n`).Find(b)
	if row == nil {
		t.Fatal("app.js has no attemptRow")
	}
	if !regexp.MustCompile(`a\.traceId\s*\?\s*h\(`).Match(row) || !regexp.MustCompile(`String\(a\.traceId\)`).Match(row) {
		t.Fatalf("the attempt row does not show a.traceId as text:\n%s", row)
	}
}
