package rest

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// A v0.3 stream's events leave as StreamResponses in ProtoJSON, however
// the stream's writes split its frames; ids and keep-alives pass as they
// are, and the error that ends a stream is an SSE "error" event.
func TestV03StreamEventsAreStreamResponses(t *testing.T) {
	in := "id: 1-0\ndata: {\"kind\":\"status-update\",\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"canceled\"},\"final\":true}\n\n" +
		": ping\n\n" +
		"data: {\"code\":-32603,\"message\":\"the stream failed\"}\n\n"
	want := "id: 1-0\ndata: {\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_CANCELLED\"},\"final\":true}}\n\n" +
		": ping\n\n" +
		"event: error\ndata: {\"code\":-32603,\"message\":\"the stream failed\"}\n\n"
	for _, chunk := range []int{1, 7, 64, len(in)} {
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		v03Events(func(bw *bufio.Writer) {
			for s := in; s != ""; {
				n := min(chunk, len(s))
				_, _ = bw.WriteString(s[:n])
				_ = bw.Flush()
				s = s[n:]
			}
		})(w)
		if got := out.String(); got != want {
			t.Fatalf("writes of %d bytes:\n got %q\nwant %q", chunk, got, want)
		}
		if strings.Contains(out.String(), `"kind"`) {
			t.Fatal("a kind discriminator left")
		}
	}
}
