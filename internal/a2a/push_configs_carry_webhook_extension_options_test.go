package a2a

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/secrets"
)

var testSecret = SigningSecretPrefix + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef01234567"))

func extMeta(opts string) string {
	return `{"` + WebhookExtensionURI + `":` + opts + `}`
}

// Each dialect's push config reads the extension's params from its
// metadata, and each dialect's answer shows them with the secret masked.
func TestPushConfigsCarryWebhookExtensionOptions(t *testing.T) {
	t.Parallel()
	opts := `{"events":"final","rateLimit":2.5,"maxConcurrent":3,"standardWebhooks":{"scheme":"v1","secret":"` + testSecret + `"}}`
	for _, tc := range []struct {
		c      codec
		params string
	}{
		{v10{}, `{"taskId":"t1","id":"c1","url":"https://h.example.com/w","metadata":` + extMeta(opts) + `}`},
		{v03{}, `{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example.com/w","metadata":` + extMeta(opts) + `}}`},
		{v01{}, `{"id":"t1","pushNotificationConfig":{"url":"https://h.example.com/w","metadata":` + extMeta(opts) + `}}`},
	} {
		cfg, err := tc.c.decodePushSet(json.RawMessage(tc.params))
		if err != nil {
			t.Fatalf("%T: %v", tc.c, err)
		}
		o := cfg.Options
		if o == nil || o.Events != EventsFinal || o.RateLimit != 2.5 || o.MaxConcurrent != 3 || o.Signing == nil || o.Signing.Secret != testSecret {
			t.Fatalf("%T: options %+v", tc.c, o)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%T: %v", tc.c, err)
		}
		out, _ := json.Marshal(tc.c.encodePush(cfg))
		if strings.Contains(string(out), testSecret) || !strings.Contains(string(out), `"secret":"****`) ||
			!strings.Contains(string(out), WebhookExtensionURI) || !strings.Contains(string(out), `"events":"final"`) {
			t.Fatalf("%T: answer %s", tc.c, out)
		}
	}
}

// A config sent inline takes the send's metadata when it has none of its
// own: gRPC's push config has no metadata field.
func TestAnInlineConfigTakesTheSendsWebhookOptions(t *testing.T) {
	t.Parallel()
	params := `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},` +
		`"configuration":{"taskPushNotificationConfig":{"url":"https://h.example.com/w"}},"metadata":` + extMeta(`{"events":"no-artifact-chunks"}`) + `}`
	p, _, err := decodeSend(V10, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	if p.PushConfig == nil || p.PushConfig.Options == nil || p.PushConfig.Options.Events != EventsNoArtifactChunks {
		t.Fatalf("inline config %+v", p.PushConfig)
	}
}

func TestWebhookExtensionOptionsAreChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{"events":"some"}`,
		`{"rateLimit":-1}`,
		`{"rateLimit":100000}`,
		`{"maxConcurrent":5000}`,
		`{"standardWebhooks":{"scheme":"v2"}}`,
		`{"standardWebhooks":{"scheme":"v1"}}`,
		`{"standardWebhooks":{"scheme":"v1","secret":"whsec_c2hvcnQ="}}`,
		`{"standardWebhooks":{"scheme":"v1","secret":"nope"}}`,
		`{"standardWebhooks":{"scheme":"v1a","secret":"` + testSecret + `"}}`,
		`{"unknown":1}`,
		`[]`,
	} {
		params := `{"taskId":"t1","url":"https://h.example.com/w","metadata":` + extMeta(bad) + `}`
		cfg, err := v10{}.decodePushSet(json.RawMessage(params))
		if err == nil {
			err = cfg.Validate()
		}
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(fe.Field, "metadata") {
			t.Errorf("%s: got %v, want a field error naming metadata", bad, err)
		}
	}
	// Metadata under other keys, or none, asks nothing.
	for _, meta := range []string{`{"other":{"events":"bogus"}}`, `null`, extMeta(`null`)} {
		cfg, err := v10{}.decodePushSet(json.RawMessage(`{"taskId":"t1","url":"https://h.example.com/w","metadata":` + meta + `}`))
		if err != nil || cfg.Options != nil {
			t.Errorf("%s: %+v %v", meta, cfg.Options, err)
		}
	}
}

// The v1 secret is sealed at rest like the token, bound to its config.
func TestTheSigningSecretIsSealedAtRest(t *testing.T) {
	t.Parallel()
	r, err := secrets.Generate("k1")
	if err != nil {
		t.Fatal(err)
	}
	c := PushConfig{ID: "c1", TaskID: "t1", URL: "https://h.example.com/w",
		Options: &WebhookOptions{Signing: &SigningOptions{Scheme: SchemeV1, Secret: testSecret}}}
	sealed, err := SealPush(r, c)
	if err != nil {
		t.Fatal(err)
	}
	if sealed.Options.Signing.Secret == testSecret || c.Options.Signing.Secret != testSecret {
		t.Fatalf("sealed %q, original %q", sealed.Options.Signing.Secret, c.Options.Signing.Secret)
	}
	opened, _, err := OpenPush(r, sealed)
	if err != nil || opened.Options.Signing.Secret != testSecret {
		t.Fatalf("opened %+v %v", opened.Options, err)
	}
	if string(opened.Options.SigningKey()) != "0123456789abcdef01234567" {
		t.Fatalf("key %q", opened.Options.SigningKey())
	}
	moved := sealed
	moved.ID = "c2"
	if _, _, err := OpenPush(r, moved); err == nil {
		t.Fatal("a secret moved to another config opened")
	}
}
