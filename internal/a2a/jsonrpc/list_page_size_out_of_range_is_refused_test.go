package jsonrpc

import (
	"net/http"
	"testing"
)

// ListTasks' pageSize is the proto's `optional int32 page_size`: unspecified
// (absent or null) is the default, a value given must be within 1..100.
// 0, a negative value and one above 100 are refused with -32602, not
// changed into a size relay picked.
func TestListPageSizeOutOfRangeIsRefused(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	for _, tc := range []struct {
		params string
		ok     bool
	}{
		{`{}`, true},
		{`{"pageSize":null}`, true},
		{`{"pageSize":1}`, true},
		{`{"pageSize":100}`, true},
		{`{"pageSize":0}`, false},
		{`{"pageSize":-1}`, false},
		{`{"pageSize":101}`, false},
		{`{"pageSize":1000000}`, false},
	} {
		status, raw, r := post(t, app, rpcBody(`1`, "ListTasks", tc.params), nil)
		switch {
		case status != http.StatusOK:
			t.Errorf("%s: status %d, body %s", tc.params, status, raw)
		case tc.ok && r.Error != nil:
			t.Errorf("%s: %s; want a result", tc.params, raw)
		case !tc.ok && (r.Error == nil || r.Error.Code != CodeInvalidParams):
			t.Errorf("%s: %s; want -32602", tc.params, raw)
		}
	}
}
