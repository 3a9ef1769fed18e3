package a2a

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// normalizeNames never panics; on JSON it either refuses with -32602 or
// returns JSON whose decoded tree is the input's with every name outside
// metadata and data rewritten to lowerCamel, and which it would return as
// it is.
func FuzzNormalizeNames(f *testing.F) {
	for _, s := range append([]string{seedV10Send, `{}`, `null`, `[]`, ``, ` `, `{"a_b":1}`, `{"task_id":"t","taskId":"t"}`,
		`{"metadata":{"a_b":{"c_d":1}},"Data":[{"e_f":2}],"x_y":{"metadata_x":{"g_h":3}}}`,
		`{"message":{"message_id":"m","parts":[{"data":{"k_k":1},"media_type":"t"}]},"configuration":{"history_length":1}}`,
		`{"a\u005fb":1,"_":2,"__x":3,"x_":4,"A_b_C":5}`, `{"k":` + strings.Repeat(`[{"a_b":`, 40) + `1` + strings.Repeat(`}]`, 40) + `}`,
		`{"a":1,"a":2}`, `{"a":tru}`, `{"a" 1}`, `{"a":1,}`, `[1,2`, `"x_y"`, `-1.5e3`}, seedPush...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := normalizeNames(in)
		if !json.Valid(in) {
			if err != nil {
				checkClientError(t, err, in)
			}
			return
		}
		if err != nil {
			checkClientError(t, err, in)
			return
		}
		if len(bytes.TrimSpace(in)) == 0 {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q became %q, not JSON", in, out)
		}
		again, err := normalizeNames(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("%q: normalizing %q again gave %q, %v", in, out, again, err)
		}
		want, got := renamed(decodeTree(t, in), 0), decodeTree(t, out)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%q became %q: decodes to %v, want %v", in, out, got, want)
		}
	})
}

func decodeTree(t *testing.T, b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// renamed is what normalizeNames does, on a decoded tree.
func renamed(v any, depth int) any {
	if depth >= maxNameDepth {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if strings.Contains(k, "_") {
				k = lowerCamel(k)
			}
			if f := strings.ToLower(k); f != "metadata" && f != "data" {
				e = renamed(e, depth+1)
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = renamed(e, depth+1)
		}
		return out
	}
	return v
}

func TestLowerCamelIsProtocsJSONName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"task_id": "taskId", "history_length": "historyLength",
		"task_push_notification_config": "taskPushNotificationConfig", "taskId": "taskId", "a_1b": "a1b", "x_": "x", "_x": "X"} {
		if got := lowerCamel(in); got != want {
			t.Errorf("lowerCamel(%q) = %q, want %q", in, got, want)
		}
	}
}
