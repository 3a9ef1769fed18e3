package webhook

import (
	"context"
	"errors"
	"net/http"
)

type ctxKey struct{}

// NewContext returns ctx carrying n, as Middleware passes it to its handler
// (for tests of handlers, say).
func NewContext(ctx context.Context, n *Notification) context.Context {
	return context.WithValue(ctx, ctxKey{}, n)
}

// FromContext returns the Notification Middleware verified for the request
// whose context ctx is.
func FromContext(ctx context.Context) (*Notification, bool) {
	n, ok := ctx.Value(ctxKey{}).(*Notification)
	return n, ok && n != nil
}

// Middleware serves a webhook endpoint: it calls next only with verified,
// not yet processed notifications, with the *Notification in the request's
// context (FromContext) and the body readable again. It answers the rest
// itself, in plain text:
//
//   - a POST that fails Verify: 401 with the reason (413 for a body over
//     MaxBody, 400 for a signed body it cannot decode, 503 with
//     Retry-After when relay's JWKS cannot be fetched, without the cause).
//     relay retries them all, with backoff, until its retry policy gives
//     up, and keeps the answer in its delivery log.
//   - an id already processed (ErrReplayed): 200 "already processed", and
//     next does not run. The notification was handled once; relay, which
//     retries until it gets a 2xx (for instance when it did not get the
//     first answer in time), must stop.
//   - an id whose handling is still under way in this process (relay gave
//     up waiting and retried): 409, and next does not run; relay retries
//     later, and that retry is acknowledged (200) if the first handling
//     succeeded, or handled if it failed.
//   - GET ?validationToken=X, relay's URL ownership check: X is echoed
//     with 200, which tells relay this URL wants its notifications (unless
//     Config.DisableValidationEcho; the GET is not signed, so nothing else
//     about it can be checked).
//   - any other method: 405.
//
// When next answers 2xx (or writes nothing, which is a 200), Middleware
// calls Done, so the id counts as processed; after any other status, or a
// panic, it does not, and relay's retry runs next again. So answer 2xx
// only once the notification is safely handled (stored or queued), and
// answer fast: relay gives each POST a timeout (10 s by default) and keeps
// the task's later notifications to this webhook waiting behind a retry.
//
// Processed ids are remembered in memory, per Verifier, for
// Config.ReplayWindow: receivers running several instances, or needing
// exactly-once beyond that window, should also deduplicate on
// Notification.ID in their own store.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && !v.cfg.DisableValidationEcho {
			if tok, ok := r.URL.Query()[QueryValidationToken]; ok {
				if len(tok) != 1 || !validToken(tok[0]) {
					plain(w, http.StatusBadRequest, "webhook: bad validationToken")
					return
				}
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("X-Content-Type-Options", "nosniff")
				_, _ = w.Write([]byte(tok[0])) // exactly the token
				return
			}
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			plain(w, http.StatusMethodNotAllowed, "webhook: POST only")
			return
		}
		n, err := v.Verify(r)
		switch {
		case errors.Is(err, ErrReplayed):
			plain(w, http.StatusOK, "already processed")
			return
		case errors.Is(err, ErrKeysUnavailable):
			// The cause (a URL, an address) is this receiver's business.
			w.Header().Set("Retry-After", "30")
			err = ErrKeysUnavailable
		}
		if err != nil {
			plain(w, StatusCode(err), err.Error())
			return
		}
		if !v.replay.begin(n.ID) {
			plain(w, http.StatusConflict, "webhook: this notification is being processed")
			return
		}
		defer v.replay.end(n.ID)
		// Another request with this id may have been processed between
		// Verify and begin.
		if v.replay.seen(n.ID, v.cfg.Now()) {
			plain(w, http.StatusOK, "already processed")
			return
		}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(NewContext(r.Context(), n)))
		if rec.status == 0 || rec.status >= 200 && rec.status < 300 {
			v.Done(n)
		}
	})
}

// validToken admits relay's validation tokens (hex) and other plain tokens.
func validToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

func plain(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// recorder notes the status a handler answers with.
type recorder struct {
	http.ResponseWriter
	status int // 0 until the handler writes
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 { // 1xx are interim
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush lets handlers flush through the recorder (http.Flusher).
func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
