package a2a

import (
	"encoding/json"
	"testing"
)

// Any body of a v0.3 HTTP+JSON send or push-config set is translated or
// refused as invalid params (never a panic), and what is translated is
// JSON the object model's decoders read or refuse the same way.
func FuzzV03ProtoRequest(f *testing.F) {
	for _, s := range []string{
		`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}`,
		`{"message":{"message_id":"m","role":2,"content":[{"file":{"fileWithUri":"https://x","mimeType":"a/b"}},{"data":{"data":{"a":1}}}]},"configuration":{"blocking":true,"historyLength":2,"pushNotification":{"url":"https://h","authentication":{"schemes":["Bearer"]}}},"metadata":{}}`,
		`{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h","token":"t"}}`,
		`{"parent":"tasks/t1","configId":"c","config":{"pushNotificationConfig":{"url":"https://h"}}}`,
		seedV03Send,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, body string, send bool) {
		op := OpPushSet
		if send {
			op = OpSend
		}
		out, err := V03ProtoRequest(op, json.RawMessage(body))
		if err != nil {
			checkClientError(t, err, []byte(body))
			return
		}
		if send {
			_, _, err = decodeSend(V03, out)
		} else {
			_, err = v03{}.decodePushSet(out)
		}
		if err != nil {
			checkClientError(t, err, out)
		}
	})
}

// Any bytes a stream might hand V03ProtoEvent are rendered, passed on, or
// refused with an error: never a panic, and what it renders is JSON.
func FuzzV03ProtoEvent(f *testing.F) {
	for _, s := range []string{
		`{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`,
		`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"x"}]}},"final":true}`,
		`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"data","data":{"a":1}}]}}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"aGk="}}]}`,
		`{"code":-32603,"message":"x"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, event string) {
		out, err := V03ProtoEvent([]byte(event))
		if err == nil && !json.Valid(out) {
			t.Fatalf("%s rendered as %s, not JSON", event, out)
		}
	})
}
