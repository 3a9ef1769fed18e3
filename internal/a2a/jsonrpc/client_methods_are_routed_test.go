package jsonrpc

import (
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

func TestClientMethods(t *testing.T) {
	t.Parallel()
	for _, d := range []a2a.Dialect{a2a.V10, a2a.V03} {
		m := a2a.ClientMethods(d)
		for name, want := range map[string]a2a.Op{m.Send: a2a.OpSend, m.Stream: a2a.OpStream, m.Get: a2a.OpGet, m.Cancel: a2a.OpCancel, m.Subscribe: a2a.OpSubscribe} {
			if rt, ok := routes[name]; !ok || rt.dialect != d || rt.op != want {
				t.Errorf("%s: method %q routes to %+v (%v), want op %d", d, name, rt, ok, want)
			}
		}
	}
	if (a2a.ClientMethods(a2a.V10) != a2a.Methods{Send: "SendMessage", Stream: "SendStreamingMessage", Get: "GetTask", Cancel: "CancelTask", Subscribe: "SubscribeToTask"}) ||
		(a2a.ClientMethods(a2a.V03) != a2a.Methods{Send: "message/send", Stream: "message/stream", Get: "tasks/get", Cancel: "tasks/cancel", Subscribe: "tasks/resubscribe"}) {
		t.Errorf("methods: %+v, %+v", a2a.ClientMethods(a2a.V10), a2a.ClientMethods(a2a.V03))
	}
	if (a2a.ClientMethods(a2a.V01) != a2a.Methods{}) {
		t.Errorf("ClientMethods(V01) = %+v, want zero", a2a.ClientMethods(a2a.V01))
	}
}
