package a2a

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Seed bodies: what real clients of each dialect send (testdata/seeds,
// shared with the JSON-RPC binding's fuzz tests).
var (
	seedV01Send = readSeed("v01_send.json")
	seedV03Send = readSeed("v03_send.json")
	seedV10Send = readSeed("v10_send.json")
	seedPush    = strings.Split(strings.TrimSpace(readSeed("push_params.jsonl")), "\n")
)

// readSeed reads a seed body from testdata/seeds.
func readSeed(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "seeds", name))
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(b))
}

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
