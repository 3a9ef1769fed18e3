package ingest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// The demo's estimate counts its echo as encoding/json stores it: text
// that escapes (quotes, controls, HTML's characters, U+2028) is charged
// for its escapes, never less than it takes.
func TestDemoEstimatesItsEchoAsStored(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain text", `"quoted" \ back`, "a\nb\tc\r\b\f\x00\x1f", "<b>&amp;</b>", "line\u2028para\u2029", "é€😀",
		strings.Repeat("<", 1000)} {
		b, _ := json.Marshal(s)
		if got, want := jsonStringBytes(s), int64(len(b)-2); got != want {
			t.Errorf("jsonStringBytes(%q) = %d; encoding/json writes %d", s, got, want)
		}
	}
	d := &Demo{cfg: DemoConfig{}.withDefaults()}
	msg := func(text, md string) a2a.Message {
		return a2a.Message{Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}, Metadata: json.RawMessage(md)}
	}
	text := strings.Repeat("<", 1000) // 6,000 bytes stored
	echo := d.Estimate(a2a.Task{}, msg(text, `{"demo":{"steps":50,"artifactChunks":4}}`))
	if want := (Output{Events: 50 + 2 + 4, Bytes: 2*6000 + (50+2+4)*demoEventBytes}); echo != want {
		t.Errorf("estimate %+v; want %+v: the echo twice as stored, and each event", echo, want)
	}
	if failed := d.Estimate(a2a.Task{}, msg(text, `{"demo":{"steps":3,"outcome":"failed"}}`)); failed.Bytes != 5*demoEventBytes {
		t.Errorf("a task that fails echoes nothing: estimate %+v, want %d bytes", failed, 5*demoEventBytes)
	}
}
