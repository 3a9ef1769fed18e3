package a2a

import (
	"encoding/json"
	"testing"
)

// Fields a binding takes from the URL join the params object: under their
// lowerCamel names in v1.0 (ProtoJSON), into an absent body too; a body
// naming the same field with another value, or a field given twice, is
// refused as invalid params.
func TestFieldsFromTheURLJoinTheParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		d      Dialect
		params string
		fields map[string]any
		want   string // "" for a refusal
	}{
		{"absent body", V10, ``, map[string]any{"id": "t1", "history_length": 2}, `{"historyLength":2,"id":"t1"}`},
		{"null body", V03, `null`, map[string]any{"id": "t1"}, `{"id":"t1"}`},
		{"body and path agree", V10, `{"task_id":"t1","url":"https://h.example.com"}`, map[string]any{"taskId": "t1"},
			`{"taskId":"t1","url":"https://h.example.com"}`},
		{"body names another task", V10, `{"taskId":"t2"}`, map[string]any{"taskId": "t1"}, ""},
		{"v0.3 names stay", V03, `{"metadata":{}}`, map[string]any{"history_length": 1}, `{"history_length":1,"metadata":{}}`},
		{"given twice", V10, ``, map[string]any{"pageSize": 1, "page_size": 2}, ""},
		{"body not an object", V10, `[1]`, map[string]any{"id": "t1"}, ""},
	} {
		got, err := Call{Dialect: tc.d, Params: json.RawMessage(tc.params), Fields: tc.fields}.params()
		if tc.want == "" {
			if !IsKind(err, KindInvalidParams) {
				t.Errorf("%s: %s, %v; want invalid params", tc.name, got, err)
			}
			continue
		}
		if err != nil || !sameJSON(got, []byte(tc.want)) {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}
