package rest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
)

// v0.3 over HTTP+JSON speaks ProtoJSON of v0.3's a2a.proto, as the
// official v0.3 clients do (a2a.V03ProtoRequest, V03ProtoResult,
// V03ProtoEvent translate), and answers an error as those clients read it:
// {"code": <the JSON-RPC code of its kind>, "message": ...}, with the HTTP
// status of spec §5.4.

// v03Error is an error body of v0.3's HTTP+JSON.
type v03Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// errorOf is the error body of dialect d: v0.3's, or google.rpc.Status.
func errorOf(d a2a.Dialect, e *a2a.Error, s status) any {
	if d == a2a.V03 {
		return v03Error{Code: jsonrpc.Code(e.Kind), Message: e.Message}
	}
	return body(e, s)
}

// requestDialect is the dialect of c's request as its A2A-Version header
// says (v1.0 for a version relay does not speak here), for the answers
// given before a route ran.
func requestDialect(c *fiber.Ctx) a2a.Dialect {
	d, ok := dialect(c.Get("A2A-Version"))
	if !ok {
		return a2a.V10
	}
	return d
}

// v03Events wraps a stream's writer so that each event it sends (an SSE
// "data: " line of the object model) goes out as a StreamResponse in
// ProtoJSON; other lines (ids, keep-alives, the error that ends a stream)
// pass as they are.
func v03Events(run func(*bufio.Writer)) func(*bufio.Writer) {
	return func(w *bufio.Writer) {
		lw := &lineRewriter{out: w}
		bw := bufio.NewWriter(lw)
		run(bw)
		_ = bw.Flush()
	}
}

// lineRewriter rewrites the data lines of an SSE stream written to it,
// passing each on (and flushing out) once its line is complete. It holds
// at most one line: the event being written.
type lineRewriter struct {
	out  *bufio.Writer
	line []byte
}

var dataPrefix = []byte("data: ")

func (l *lineRewriter) Write(p []byte) (int, error) {
	n := len(p)
	wrote := false
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.line = append(l.line, p...)
			break
		}
		l.line = append(l.line, p[:i+1]...)
		p = p[i+1:]
		if _, err := l.out.Write(rewrite(l.line)); err != nil {
			return 0, err
		}
		l.line, wrote = l.line[:0], true
		if cap(l.line) > 64<<10 {
			l.line = nil // a large event's buffer is not kept for the next
		}
	}
	if wrote {
		if err := l.out.Flush(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

var _ io.Writer = (*lineRewriter)(nil)

// rewrite returns line (ending in \n) with its event in ProtoJSON when it
// is a data line holding one.
func rewrite(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, dataPrefix)
	if !ok {
		return line
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	if isV03Error(data) { // the error that ends the stream: an SSE "error" event, as v0.3's clients read it
		return append([]byte("event: error\n"), line...)
	}
	pb, err := a2a.V03ProtoEvent(data)
	if err != nil {
		return line
	}
	out := make([]byte, 0, len(dataPrefix)+len(pb)+1)
	return append(append(append(out, dataPrefix...), pb...), '\n')
}

// isV03Error reports whether data is a v0.3 error body (errorOf).
func isV03Error(data []byte) bool {
	var e struct {
		Code *int    `json:"code"`
		Kind *string `json:"kind"`
	}
	return json.Unmarshal(data, &e) == nil && e.Code != nil && e.Kind == nil
}
