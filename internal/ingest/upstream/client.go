package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
)

// client calls the upstream agent: its card (fetched and cached), JSON-RPC
// calls, and streams.
type client struct {
	cfg Config
	log *slog.Logger
	seq atomic.Int64 // JSON-RPC request ids

	mu     sync.Mutex
	rc     a2a.RemoteCard
	rcAt   time.Time
	cached bool
}

func newClient(cfg Config, log *slog.Logger) *client { return &client{cfg: cfg, log: log} }

// rpcError is a JSON-RPC error the agent answered with.
type rpcError struct {
	Method  string
	Code    int
	Message string
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s: JSON-RPC error %d: %s", e.Method, e.Code, e.Message)
}

// httpError is an HTTP answer that is not a JSON-RPC response.
type httpError struct {
	What    string
	Status  int
	Excerpt string
}

func (e *httpError) Error() string {
	if e.Excerpt == "" {
		return fmt.Sprintf("%s: HTTP %d", e.What, e.Status)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.What, e.Status, e.Excerpt)
}

// permanentError is a failure that no retry fixes (the agent's answer does
// not fit A2A, or is too large).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// errStreamIdle ends a stream on which nothing arrived for StreamIdle.
var errStreamIdle = errors.New("nothing arrived on the stream for too long")

// permanentCodes are the JSON-RPC errors that repeating the same request
// cannot fix. Others (-32603 internal, server-defined ones) are retried.
var permanentCodes = map[int]bool{
	jsonrpc.CodeParseError: true, jsonrpc.CodeInvalidRequest: true, jsonrpc.CodeMethodNotFound: true,
	jsonrpc.CodeInvalidParams: true, jsonrpc.CodeTaskNotFound: true, jsonrpc.CodePushNotSupported: true,
	jsonrpc.CodeUnsupportedOperation: true, jsonrpc.CodeContentTypeNotSupport: true,
	jsonrpc.CodeInvalidAgentResponse: true, jsonrpc.CodeExtendedCardNotConfig: true,
	jsonrpc.CodeExtensionRequired: true, jsonrpc.CodeVersionNotSupported: true,
}

// permanent reports whether retrying err is pointless.
func permanent(err error) bool {
	var re *rpcError
	var he *httpError
	var ae *a2a.Error
	var pe *permanentError
	switch {
	case errors.As(err, &re):
		return permanentCodes[re.Code]
	case errors.As(err, &he):
		return he.Status >= 400 && he.Status < 500 && he.Status != http.StatusRequestTimeout && he.Status != http.StatusTooManyRequests
	case errors.As(err, &ae), errors.As(err, &pe):
		return true
	}
	return errors.Is(err, errEventTooLarge)
}

// card returns the agent's card, fetching it when the cached one is older
// than CardTTL. A failed refresh keeps the card it has.
func (c *client) card(ctx context.Context) (a2a.RemoteCard, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	if c.cached && now.Sub(c.rcAt) < c.cfg.CardTTL {
		return c.rc, nil
	}
	rc, err := c.fetchCard(ctx)
	switch {
	case err == nil:
		c.rc, c.rcAt, c.cached = rc, now, true
	case c.cached && ctx.Err() == nil:
		c.log.WarnContext(ctx, "refreshing the upstream agent card failed; using the one fetched before", "err", err)
		c.rcAt = now
	default:
		return a2a.RemoteCard{}, fmt.Errorf("fetching its agent card: %w", err)
	}
	return c.rc, nil
}

// fetchCard reads /.well-known/agent-card.json, or when that is not
// served, /.well-known/agent.json.
func (c *client) fetchCard(ctx context.Context) (a2a.RemoteCard, error) {
	var first error
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		raw, err := c.get(ctx, c.cfg.URL+path)
		var he *httpError
		if errors.As(err, &he) {
			if first == nil {
				first = err
			}
			continue
		}
		if err != nil {
			return a2a.RemoteCard{}, err
		}
		rc, err := a2a.ParseCard(raw)
		if err != nil {
			return a2a.RemoteCard{}, &permanentError{fmt.Errorf("%s: %w", path, err)}
		}
		return rc, nil
	}
	return a2a.RemoteCard{}, first
}

func (c *client) get(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &permanentError{err}
	}
	c.headers(req, "application/json")
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := c.readBody(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, &httpError{What: "GET " + u, Status: resp.StatusCode, Excerpt: excerpt(body)}
	}
	return body, nil
}

// headers sets the headers of every request: the configured ones, then
// the protocol's.
func (c *client) headers(req *http.Request, accept string) {
	for k, vs := range c.cfg.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", accept)
}

// rpcRequest builds a JSON-RPC request to the card's endpoint.
func (c *client) rpcRequest(ctx context.Context, rc a2a.RemoteCard, method string, id int64, params json.RawMessage, accept string) (*http.Request, error) {
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int64           `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, &permanentError{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rc.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &permanentError{err}
	}
	c.headers(req, accept)
	req.Header.Set("Content-Type", "application/json")
	if rc.Dialect == a2a.V10 {
		req.Header.Set("A2A-Version", "1.0") // a missing header means 0.3
	}
	return req, nil
}

// call sends one JSON-RPC request and returns its result.
func (c *client) call(ctx context.Context, rc a2a.RemoteCard, method string, params json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	id := c.seq.Add(1)
	req, err := c.rpcRequest(ctx, rc, method, id, params, "application/json")
	if err != nil {
		return nil, err
	}
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	body, err := c.readBody(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	return decodeResponse(method, id, resp.StatusCode, body)
}

// rpcResponse is a JSON-RPC response as received.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeResponse returns the result of a JSON-RPC answer, or its error.
// id < 0 skips the id check (stream events).
func decodeResponse(method string, id int64, status int, body []byte) (json.RawMessage, error) {
	var r rpcResponse
	jsonErr := json.Unmarshal(body, &r)
	switch {
	case jsonErr == nil && r.Error != nil:
		return nil, &rpcError{Method: method, Code: r.Error.Code, Message: clip(r.Error.Message, 500)}
	case status/100 != 2:
		return nil, &httpError{What: method, Status: status, Excerpt: excerpt(body)}
	case jsonErr != nil:
		return nil, a2a.Errorf(a2a.KindInvalidAgentResponse, "%s: the answer is not a JSON-RPC response: %s", method, excerpt(body))
	case id >= 0 && string(bytes.TrimSpace(r.ID)) != strconv.FormatInt(id, 10):
		return nil, a2a.Errorf(a2a.KindInvalidAgentResponse, "%s: the answer's id %s is not the request's %d", method, clip(string(r.ID), 40), id)
	case len(r.Result) == 0:
		return nil, a2a.Errorf(a2a.KindInvalidAgentResponse, "%s: the answer has neither a result nor an error", method)
	}
	return r.Result, nil
}

// readBody reads a whole body, at most MaxEventSize bytes.
func (c *client) readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(c.cfg.MaxEventSize)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > c.cfg.MaxEventSize {
		return nil, &permanentError{fmt.Errorf("the answer is larger than %d bytes", c.cfg.MaxEventSize)}
	}
	return b, nil
}

// excerpt is the start of a body, fit for an error message.
func excerpt(b []byte) string {
	return clip(strings.ToValidUTF8(strings.TrimSpace(string(b)), "?"), 200)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// stream is an open streaming call: the events of an SSE answer, or the
// one result of a server that answered with plain JSON.
type stream struct {
	method string
	d      a2a.Dialect
	ctx    context.Context
	cancel context.CancelCauseFunc
	body   io.Closer
	idle   *time.Timer
	sse    *sseReader
	single json.RawMessage
}

// open sends a streaming request (send or subscribe). Waiting for the
// answer's headers is bounded by RequestTimeout; after that the stream
// lives until ctx ends, close is called, or nothing arrives for StreamIdle.
func (c *client) open(ctx context.Context, rc a2a.RemoteCard, method string, params json.RawMessage) (*stream, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	id := c.seq.Add(1)
	req, err := c.rpcRequest(sctx, rc, method, id, params, "text/event-stream")
	if err != nil {
		cancel(nil)
		return nil, err
	}
	waiting := time.AfterFunc(c.cfg.RequestTimeout, func() { cancel(fmt.Errorf("no answer within %s", c.cfg.RequestTimeout)) })
	resp, err := c.cfg.HTTP.Do(req)
	if !waiting.Stop() && err == nil {
		resp.Body.Close()
		err = context.Cause(sctx)
	}
	if err != nil {
		cancel(nil)
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	s := &stream{method: method, d: rc.Dialect, ctx: sctx, cancel: cancel, body: resp.Body}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 == 2 && mt == "text/event-stream" {
		s.idle = time.AfterFunc(c.cfg.StreamIdle, func() { cancel(errStreamIdle) })
		s.sse = newSSEReader(&idleReader{r: resp.Body, t: s.idle, d: c.cfg.StreamIdle}, c.cfg.MaxEventSize)
		return s, nil
	}
	// Not a stream: a JSON-RPC error, or a server that answered with one result.
	defer s.close()
	body, err := c.readBody(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	if s.single, err = decodeResponse(method, id, resp.StatusCode, body); err != nil {
		return nil, err
	}
	return s, nil
}

// next returns the next event; io.EOF when the stream ended.
func (s *stream) next() (a2a.Event, error) {
	if s.sse == nil {
		raw := s.single
		if raw == nil {
			return a2a.Event{}, io.EOF
		}
		s.single = nil
		return a2a.DecodeEvent(s.d, raw)
	}
	data, err := s.sse.next()
	if err != nil {
		if cause := context.Cause(s.ctx); errors.Is(cause, errStreamIdle) {
			err = cause
		}
		return a2a.Event{}, err
	}
	result, err := decodeResponse(s.method, -1, http.StatusOK, data)
	if err != nil {
		return a2a.Event{}, err
	}
	return a2a.DecodeEvent(s.d, result)
}

// close ends the stream and frees its connection.
func (s *stream) close() {
	if s.idle != nil {
		s.idle.Stop()
	}
	s.cancel(nil)
	_ = s.body.Close()
}

// idleReader restarts the idle timer whenever bytes arrive.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}
