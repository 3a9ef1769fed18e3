package delivery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ssrf"
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
}

// post sends one notification and returns what happened, filling a. ctx
// bounds the attempt (the caller's per-attempt timeout).
func (w *Workers) post(ctx context.Context, cfg a2a.PushConfig, n a2a.Notification, nid string, a *Attempt) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(n.Body))
	if err != nil {
		a.ErrorClass, a.Error = "http", "bad webhook URL"
		return result{err: err}
	}
	if err := w.setHeaders(req, cfg, n, nid); err != nil {
		a.ErrorClass, a.Error = "sign", err.Error()
		return result{err: err}
	}
	start := w.now()
	resp, err := w.client.Do(req)
	a.LatencyMs = float64(w.now().Sub(start).Microseconds()) / 1000
	if err != nil {
		a.ErrorClass, a.Error = ssrf.Classify(err), errorText(err)
		return result{err: err}
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, int64(w.cfg.ExcerptBytes)))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	a.Status, a.Response = resp.StatusCode, validUTF8(excerpt)
	r := result{status: resp.StatusCode}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		a.ErrorClass = "http"
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), w.now())
		}
	}
	return r
}

// setHeaders sets the notification's headers, the JWT among them.
func (w *Workers) setHeaders(req *http.Request, cfg a2a.PushConfig, n a2a.Notification, nid string) error {
	sum := sha256.Sum256(n.Body)
	now := w.now()
	tok, err := w.signer.Sign(&webhook.Claims{Issuer: w.cfg.Issuer, Audience: cfg.URL, IssuedAt: now.Unix(),
		ExpiresAt: now.Add(w.cfg.TokenTTL).Unix(), ID: nid,
		RelayClaims: webhook.RelayClaims{TaskID: cfg.TaskID, BodySHA256: hex.EncodeToString(sum[:])}})
	if err != nil {
		return err
	}
	h := req.Header
	h.Set("Content-Type", n.ContentType)
	h.Set("User-Agent", w.cfg.UserAgent)
	h.Set(webhook.HeaderVersion, n.Version)
	h.Set(webhook.HeaderID, nid)
	h.Set(webhook.HeaderJWT, tok)
	if a := cfg.Auth; a != nil && a.Credentials != "" {
		scheme := "Bearer"
		if len(a.Schemes) > 0 && a.Schemes[0] != "" {
			scheme = a.Schemes[0]
		}
		h.Set("Authorization", scheme+" "+a.Credentials)
	} else {
		h.Set("Authorization", "Bearer "+tok)
	}
	if cfg.Token != "" {
		h.Set(webhook.HeaderToken, cfg.Token)
		h.Set(webhook.HeaderTokenV1, cfg.Token)
	}
	return nil
}

// errorText is an error's message without the URL Go's client prefixes.
func errorText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "\": "); i >= 0 {
		s = s[i+3:]
	}
	return s
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
