package delivery

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/ssrf"
	"github.com/a2arelay/relay/internal/telemetry"
	"github.com/a2arelay/relay/webhook"
)

// Attempt is one logged delivery attempt.
type Attempt struct {
	Time           time.Time  `json:"time"`
	NotificationID string     `json:"notificationId"`
	TaskID         string     `json:"taskId"`
	ConfigID       string     `json:"configId"`
	URL            string     `json:"url"`
	Attempt        int        `json:"attempt"`
	Status         int        `json:"status,omitempty"`
	ErrorClass     string     `json:"errorClass,omitempty"`
	Error          string     `json:"error,omitempty"`
	LatencyMs      float64    `json:"latencyMs"`
	Response       string     `json:"response,omitempty"`
	Outcome        string     `json:"outcome"`
	NextAttempt    *time.Time `json:"nextAttempt,omitempty"`
	// endpoint is the endpoint's health id, owner the client whose config
	// sent it (neither logged): the attempt counts to its health.
	endpoint, owner string
	// TraceID is the trace the attempt was traced in: its task turn's
	// ("": tracing is off).
	TraceID string `json:"traceId,omitempty"`
}

// appendJSON appends the attempt's JSON to b: the bytes json.Marshal
// writes for a (one attempt is logged per notification), written without
// reflection when its strings need no escapes, else by json.Marshal.
func (a *Attempt) appendJSON(b []byte) ([]byte, error) {
	if !plainJSON(a.NotificationID) || !plainJSON(a.TaskID) || !plainJSON(a.ConfigID) || !plainJSON(a.URL) ||
		!plainJSON(a.ErrorClass) || !plainJSON(a.Error) || !plainJSON(a.Response) || !plainJSON(a.Outcome) || !plainJSON(a.TraceID) ||
		math.IsNaN(a.LatencyMs) || math.IsInf(a.LatencyMs, 0) {
		j, err := json.Marshal(a)
		return append(b, j...), err
	}
	start := len(b)
	b, err := appendJSONTime(append(b, `{"time":`...), a.Time)
	if err != nil {
		j, err := json.Marshal(a) // the error json.Marshal gives
		return append(b[:start], j...), err
	}
	b = appendField(b, `,"notificationId":`, a.NotificationID, false)
	b = appendField(b, `,"taskId":`, a.TaskID, false)
	b = appendField(b, `,"configId":`, a.ConfigID, false)
	b = appendField(b, `,"url":`, a.URL, false)
	b = strconv.AppendInt(append(b, `,"attempt":`...), int64(a.Attempt), 10)
	if a.Status != 0 {
		b = strconv.AppendInt(append(b, `,"status":`...), int64(a.Status), 10)
	}
	b = appendField(b, `,"errorClass":`, a.ErrorClass, true)
	b = appendField(b, `,"error":`, a.Error, true)
	b = appendJSONFloat(append(b, `,"latencyMs":`...), a.LatencyMs)
	b = appendField(b, `,"response":`, a.Response, true)
	b = appendField(b, `,"outcome":`, a.Outcome, false)
	if a.NextAttempt != nil {
		if b, err = appendJSONTime(append(b, `,"nextAttempt":`...), *a.NextAttempt); err != nil {
			j, err := json.Marshal(a)
			return append(b[:start], j...), err
		}
	}
	b = appendField(b, `,"traceId":`, a.TraceID, true)
	return append(b, '}'), nil
}

// plainJSON: s is printable ASCII that json.Marshal writes as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendField appends name and the plain string s, quoted; omitempty: an
// empty s is left out.
func appendField(b []byte, name, s string, omitempty bool) []byte {
	if omitempty && s == "" {
		return b
	}
	b = append(b, name...)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONTime appends t as time.Time's MarshalJSON writes it.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	b, err := t.AppendText(append(b, '"'))
	return append(b, '"'), err
}

// appendJSONFloat appends f as json.Marshal writes a float64 (f finite).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 as e-7
		b = b[:n-1]
	}
	return b
}

// post sends one notification and returns what happened, filling a. ctx
// bounds the attempt (the caller's per-attempt timeout).
func (w *Workers) post(ctx context.Context, cfg a2a.PushConfig, n a2a.Notification, nid string, a *Attempt) result {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	target, err := w.targets.of(cfg.URL)
	if err != nil {
		a.ErrorClass, a.Error = "http", "bad webhook URL"
		return result{err: err}
	}
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(target)
	req.SetBodyRaw(n.Body)
	if err := w.setHeaders(&req.Header, cfg, n, nid, telemetry.TraceParent(ctx)); err != nil {
		a.ErrorClass, a.Error = "sign", err.Error()
		return result{err: err}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = w.now().Add(w.cfg.Timeout)
	}
	start := w.now()
	err = doPost(w.client, req, resp, deadline)
	a.LatencyMs = float64(w.now().Sub(start).Microseconds()) / 1000
	if err != nil {
		a.ErrorClass, a.Error = ssrf.Classify(err), errorText(err)
		return result{err: err, blocked: a.ErrorClass == ssrf.ClassBlocked}
	}
	status, body := resp.StatusCode(), resp.Body()
	a.Status, a.Response = status, validUTF8(body[:min(len(body), w.cfg.ExcerptBytes)])
	r := result{status: status}
	if status < 200 || status >= 300 {
		a.ErrorClass = "http"
		if status < 200 {
			a.Error = "an informational (1xx) response before the answer: not supported"
		}
		if status == fasthttp.StatusTooManyRequests || status == fasthttp.StatusServiceUnavailable {
			r.retryAfter = parseRetryAfter(string(resp.Header.Peek("Retry-After")), w.now())
		}
	}
	return r
}

// targetCacheSize bounds the webhook URLs targetCache keeps.
const targetCacheSize = 4096

// targetCache keeps, by webhook URL, the URL a POST goes to (postTarget),
// so that a webhook's notifications do not parse its URL each. It is
// emptied when full.
type targetCache struct {
	mu sync.Mutex
	m  map[string]string
}

// of returns postTarget(raw), from the cache when it is there (a URL that
// fails is not kept).
func (c *targetCache) of(raw string) (string, error) {
	c.mu.Lock()
	t, ok := c.m[raw]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := postTarget(raw)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= targetCacheSize {
		c.m = make(map[string]string, 64)
	}
	c.m[raw] = t
	c.mu.Unlock()
	return t, nil
}

// postTarget is the URL a POST to the webhook at raw goes to: raw without
// its credentials. Credentials in the URL are not sent: the Authorization
// header is relay's own (setHeaders), as it was with net/http, which added
// Basic auth only when no Authorization was set.
func postTarget(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", cmp.Or(err, errors.New("bad webhook URL"))
	}
	u.User = nil
	return u.String(), nil
}

// setHeaders sets the notification's headers, the JWT among them, and the
// attempt's traceparent tp ("": none, as when tracing is off).
func (w *Workers) setHeaders(h *fasthttp.RequestHeader, cfg a2a.PushConfig, n a2a.Notification, nid, tp string) error {
	sum := sha256.Sum256(n.Body)
	now := w.now()
	bp := tokenBufs.Get().(*[]byte)
	defer tokenBufs.Put(bp)
	// "Bearer " and the token, in one buffer: the token alone is the JWT
	// header; both are the Authorization when the config has no credentials.
	buf, err := w.signer.AppendSign(append((*bp)[:0], bearer...), &webhook.Claims{Issuer: w.cfg.Issuer,
		Audience: cfg.URL, IssuedAt: now.Unix(), ExpiresAt: now.Add(w.cfg.TokenTTL).Unix(), ID: nid,
		RelayClaims: webhook.RelayClaims{TaskID: cfg.TaskID, BodySHA256: hex.EncodeToString(sum[:])}})
	*bp = buf
	if err != nil {
		return err
	}
	h.SetContentType(n.ContentType)
	h.SetUserAgent(w.cfg.UserAgent)
	h.Set(webhook.HeaderVersion, n.Version)
	h.Set(webhook.HeaderID, nid)
	h.SetBytesV(webhook.HeaderJWT, buf[len(bearer):])
	if a := cfg.Auth; a != nil && a.Credentials != "" {
		scheme := "Bearer"
		if len(a.Schemes) > 0 && a.Schemes[0] != "" {
			scheme = a.Schemes[0]
		}
		h.Set("Authorization", scheme+" "+a.Credentials)
	} else {
		h.SetBytesV("Authorization", buf)
	}
	if cfg.Token != "" {
		h.Set(webhook.HeaderToken, cfg.Token)
		h.Set(webhook.HeaderTokenV1, cfg.Token)
	}
	if tp != "" {
		h.Set(webhook.HeaderTraceParent, tp)
	}
	return w.setStandardHeaders(h, &cfg, n.Body, nid, now)
}

// endAttempt ends the span of attempt a with its outcome.
func endAttempt(span trace.Span, a *Attempt) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("relay.notification_id", a.NotificationID), attribute.String("relay.task_id", a.TaskID),
		attribute.String("relay.config_id", a.ConfigID), attribute.Int("relay.attempt", a.Attempt),
		attribute.String("relay.outcome", a.Outcome))
	if a.Status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", a.Status))
	}
	if a.Outcome != string(outbox.Delivered) {
		span.SetStatus(codes.Error, cmp.Or(a.ErrorClass, a.Outcome))
	}
	span.End()
}

// bearer starts the Authorization header relay sends with its JWT.
const bearer = "Bearer "

// tokenBufs holds buffers for the Authorization header being built (the
// header copies it).
var tokenBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// redactURL is raw with its password, if any, replaced by "xxxxx"; "" when
// raw does not parse.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Redacted()
}

// maxErrorText caps the error text an attempt logs: a client error may
// quote what the webhook sent.
const maxErrorText = 512

// errorText is an error's message without the URL Go's client prefixes,
// cut to maxErrorText bytes (on a rune boundary).
func errorText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "\": "); i >= 0 {
		s = s[i+3:]
	}
	if len(s) > maxErrorText {
		s = strings.ToValidUTF8(s[:maxErrorText], "") + "…"
	}
	return s
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
