package a2a

import (
	"encoding/json"
	"testing"
)

// Go's decoder reads member names case-insensitively, so a body member
// (or a query parameter) spelled as a URL field in another ASCII case
// names that field: it must agree with the URL or be refused, never
// replace the task or config the URL names.
func TestAURLFieldIsNotOverriddenByACaseVariant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		d      Dialect
		params string
		fields map[string]any
		ref    func(json.RawMessage) (string, string, error)
		task   string
		config string
	}{
		{"v1.0 body taskid", V10, `{"taskid":"t2"}`, map[string]any{"taskId": "t1", "id": "c1"}, v10{}.decodePushRef, "t1", "c1"},
		{"v1.0 query taskid", V10, ``, map[string]any{"taskId": "t1", "id": "c1", "taskid": "t2"}, v10{}.decodePushRef, "t1", "c1"},
		{"v1.0 body TASKID", V10, `{"TASKID":"t2"}`, map[string]any{"taskId": "t1", "id": "c1"}, v10{}.decodePushRef, "t1", "c1"},
		{"v0.3 body config id", V03, `{"pushnotificationconfigid":"c2"}`, map[string]any{"id": "t1", "pushNotificationConfigId": "c1"},
			v03{}.decodePushRef, "t1", "c1"},
	} {
		p, err := Call{Dialect: tc.d, Params: json.RawMessage(tc.params), Fields: tc.fields}.params()
		if err == nil {
			var task, config string
			task, config, err = tc.ref(p)
			if err == nil && (task != tc.task || config != tc.config) {
				t.Errorf("%s: the call names task %s, config %s; the URL names %s, %s", tc.name, task, config, tc.task, tc.config)
				continue
			}
		}
		if err != nil && !IsKind(err, KindInvalidParams) {
			t.Errorf("%s: %v; want the URL's ids or invalid params", tc.name, err)
		}
	}
}
