package a2a

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Seed bodies: what real clients of each dialect send.
var (
	seedV01Send = `{"id":"de38c76d-d54c-436c-8b9f-4c2703648d64","sessionId":"c295ea44-7543-4f78-b524-7a38915ad6e4",
		"acceptedOutputModes":["text"],"historyLength":null,"metadata":null,
		"message":{"role":"user","parts":[{"type":"text","text":"What is the exchange rate of USD to EUR?"}]},
		"pushNotification":{"url":"https://client.example.com/notify","token":"t0k",
			"authentication":{"schemes":["Bearer"],"credentials":"abc"}}}`
	seedV03Send = `{"message":{"kind":"message","messageId":"9229e770-767c-417b-a0b0-f0741243c589","role":"user",
		"parts":[{"kind":"text","text":"how much is 10 USD in INR?"},{"kind":"file","file":{"name":"a.png","mimeType":"image/png","bytes":"iVBORw0K"}},
		{"kind":"data","data":{"amount":10}}],"contextId":"ctx","taskId":"t1","referenceTaskIds":[]},
		"configuration":{"acceptedOutputModes":["text/plain"],"blocking":false,"historyLength":2,
		"pushNotificationConfig":{"id":"p1","url":"https://client.example.com/hook","token":"tk","authentication":{"schemes":["Bearer"]}}},
		"metadata":{}}`
	seedV10Send = `{"tenant":"","message":{"messageId":"e5e7f0a0","role":"ROLE_USER","parts":[{"text":"hi","mediaType":"text/plain"},
		{"raw":"aGk=","filename":"a.txt"},{"url":"https://example.com/b"},{"data":{"k":[1,null,"x"]}}],"extensions":[],"metadata":null},
		"configuration":{"acceptedOutputModes":[],"returnImmediately":true,"historyLength":null,
		"taskPushNotificationConfig":{"taskId":"","id":"","url":"https://client.example.com/v1","token":"tk",
		"authentication":{"scheme":"Bearer","credentials":"cr"}}}}`
	seedPush = []string{
		`{"id":"t1","pushNotificationConfig":{"url":"https://h.example.com","token":"tk","authentication":{"schemes":["Bearer"],"credentials":"c"}}}`,
		`{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example.com"}}`,
		`{"id":"t1","pushNotificationConfigId":"c1"}`,
		`{"taskId":"t1","id":"c1","url":"https://h.example.com","token":"tk","authentication":{"scheme":"Bearer","credentials":"c"}}`,
		`{"taskId":"t1","configId":"c1","config":{"url":"https://h.example.com","authentication":{"scheme":"Basic"}}}`,
		`{"taskId":"t1","config":null,"pageSize":null}`,
		`{"taskId":"t1","config":{"id":"","taskId":"x"}}`,
	}
)

// checkClientError fails unless err answers -32602 (an *Error or a
// *FieldError) with a message that names no Go type (unless the client
// itself sent that text).
func checkClientError(t *testing.T, err error, input []byte) {
	t.Helper()
	e, known := AsError(err)
	if !known || e.Kind != KindInvalidParams {
		t.Fatalf("error %v (%T) is not -32602", err, err)
	}
	for _, n := range goNames {
		if strings.Contains(e.Message, n) && !bytes.Contains(input, []byte(n)) {
			t.Fatalf("message %q leaks %q", e.Message, n)
		}
	}
}

func FuzzDecodeSend(f *testing.F) {
	for _, s := range []string{seedV01Send, seedV03Send, seedV10Send, `{}`, `null`, `[]`,
		`{"id":"t","message":{"parts":[{"type":"file","file":{}}]}}`,
		`{"message":{"parts":[{"kind":"data","data":null},{"text":null}]}}`,
		`{"message":{"role":"ROLE_USER","parts":[{"text":"a","raw":"b","data":{}}]},"configuration":{"blocking":true,"pushNotificationConfig":{"url":"u"}}}`,
		`{"message":{"parts":[]},"configuration":{"historyLength":1e400}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		for _, c := range []codec{v01{}, v03{}, v10{}} {
			p, hl, err := c.decodeSend(params)
			if err != nil {
				checkClientError(t, err, params)
				continue
			}
			if p.Dialect == "" || p.Dialect != dialectOf(c) {
				t.Fatalf("%T: dialect %q", c, p.Dialect)
			}
			if err := checkParts(p.Message.Parts, "message"); err != nil {
				t.Fatalf("%T accepted bad parts: %v", c, err)
			}
			if p.ClientChosenID && checkID(p.TaskID, "id") != nil {
				t.Fatalf("%T accepted task id %q", c, p.TaskID)
			}
			task := WithHistory(Task{ID: "t", History: []Message{p.Message}, Status: TaskStatus{Message: &p.Message}}, hl)
			for _, out := range []codec{v01{}, v03{}, v10{}} {
				if _, err := json.Marshal(out.encodeSendResult(task)); err != nil {
					t.Fatalf("%T decoded, %T cannot encode: %v", c, out, err)
				}
			}
		}
	})
}

func dialectOf(c codec) Dialect {
	switch c.(type) {
	case v01:
		return V01
	case v10:
		return V10
	}
	return V03
}

func FuzzDecodePush(f *testing.F) {
	for _, s := range append(seedPush, `{}`, `null`, `{"id":5}`, `{"taskId":"`+strings.Repeat("x", 300)+`"}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		for _, c := range []codec{v01{}, v03{}, v10{}} {
			if cfg, err := c.decodePushSet(params); err != nil {
				checkClientError(t, err, params)
			} else {
				if checkID(cfg.TaskID, "taskId") != nil {
					t.Fatalf("%T accepted task id %q", c, cfg.TaskID)
				}
				for _, out := range []codec{v01{}, v03{}, v10{}} {
					if _, err := json.Marshal(out.encodePushList([]PushConfig{cfg})); err != nil {
						t.Fatal(err)
					}
				}
			}
			if taskID, _, err := c.decodePushRef(params); err != nil {
				checkClientError(t, err, params)
			} else if checkID(taskID, "taskId") != nil {
				t.Fatalf("%T accepted task id %q", c, taskID)
			}
		}
	})
}

func sameJSON(a, b []byte) bool {
	dec := func(x []byte) any {
		d := json.NewDecoder(bytes.NewReader(x))
		d.UseNumber()
		var v any
		_ = d.Decode(&v)
		return v
	}
	return reflect.DeepEqual(dec(a), dec(b))
}
