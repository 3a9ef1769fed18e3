package a2a

import (
	"encoding/json"
	"testing"
)

// The send's metadata loses the webhook extension's params, however the key
// is spelled in JSON, and keeps every other key.
func FuzzWebhookParamsLeaveASendsMetadata(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `null`, `[]`, `{"` + WebhookExtensionURI + `":{"events":"final"},"b":"<&>"}`,
		`{"https:\/\/github.com\/a2arelay\/relay\/blob\/main\/docs\/webhook-extension.md":{"standardWebhooks":{"scheme":"v1","secret":"x"}}}`,
		`{"` + WebhookExtensionURI + `":null}`, `{"\u0061":2,"` + WebhookExtensionURI + `":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, metadata []byte) {
		out := withoutWebhookOptions(metadata)
		var in map[string]json.RawMessage
		if json.Unmarshal(metadata, &in) != nil || in == nil {
			return // not an object: the send is refused before (checkMetadata)
		}
		var got map[string]json.RawMessage
		if len(out) > 0 {
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s became %s: %v", metadata, out, err)
			}
		}
		if _, ok := got[WebhookExtensionURI]; ok {
			t.Fatalf("%s kept the params: %s", metadata, out)
		}
		delete(in, WebhookExtensionURI)
		if len(got) != len(in) {
			t.Fatalf("%s became %s: other keys lost", metadata, out)
		}
		for k := range in {
			if _, ok := got[k]; !ok {
				t.Fatalf("%s lost %q", metadata, k)
			}
		}
	})
}
