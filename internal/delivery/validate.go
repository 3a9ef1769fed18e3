package delivery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/ssrf"
	"github.com/a2arelay/relay/webhook"
)

// Validations remembers which webhook hosts proved they want relay's
// notifications (taskstore.HostValidations implements it), shared by every instance.
type Validations interface {
	HostValidated(ctx context.Context, host string) (bool, error)
	MarkHostValidated(ctx context.Context, host string, ttl time.Duration) error
}

// Validator checks webhook URL ownership before a host's first
// notification, the A2A samples' way: relay sends
// GET <url>?validationToken=<random> and the receiver must answer 2xx with
// the token as its body. A validated host is remembered for TTL.
type Validator struct {
	store  Validations
	client *http.Client
	ttl    time.Duration
	now    func() time.Time

	mu     sync.Mutex
	seen   map[string]time.Time     // host -> validated until (a local cache)
	failed map[string]failure       // host -> last failed check, asked again after failBackoff
	flight map[string]chan struct{} // host -> a check in progress (one at a time per host)
}

// failure is a failed check remembered for a while, so that a host that
// never agreed gets one GET per failBackoff, not one per attempt.
type failure struct {
	err   error
	until time.Time
}

// failBackoff is how long a failed check answers for its host.
const failBackoff = 5 * time.Second

// maxHosts bounds the local caches (entries past their time are dropped first).
const maxHosts = 10000

// ValidatorDeps are what a Validator works with.
type ValidatorDeps struct {
	Store Validations
	// Transport sends the GETs (the SSRF guard's).
	Transport http.RoundTripper
}

// ValidatorConfig configures a Validator.
type ValidatorConfig struct {
	// Timeout bounds one GET (RELAY_DELIVERY_TIMEOUT).
	Timeout time.Duration
	// TTL is how long a validated host stays validated
	// (RELAY_WEBHOOK_VALIDATION_TTL).
	TTL time.Duration
}

// NewValidator returns a Validator, or an error naming what is missing or
// out of range.
func NewValidator(d ValidatorDeps, cfg ValidatorConfig) (*Validator, error) {
	switch {
	case d.Store == nil || d.Transport == nil:
		return nil, errors.New("delivery: validator: Store and Transport are required")
	case cfg.Timeout <= 0 || cfg.TTL <= 0:
		return nil, fmt.Errorf("delivery: validator: Timeout (%s) and TTL (%s) must be positive", cfg.Timeout, cfg.TTL)
	}
	return &Validator{store: d.Store, ttl: cfg.TTL, now: time.Now, seen: map[string]time.Time{},
		failed: map[string]failure{}, flight: map[string]chan struct{}{},
		client: &http.Client{Transport: d.Transport, Timeout: cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}}, nil
}

// ValidationError is a webhook host that did not prove it wants the
// notifications.
type ValidationError struct{ Host, Reason string }

func (e *ValidationError) Error() string {
	return "webhook validation of " + e.Host + " failed: " + e.Reason
}

// hostOf is the validated unit: scheme, host and port.
func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bad webhook URL")
	}
	return u.Scheme + "://" + u.Host, nil
}

// Check returns nil when the host of rawURL is validated, validating it
// now when it is not.
func (v *Validator) Check(ctx context.Context, rawURL string) error {
	host, err := hostOf(rawURL)
	if err != nil {
		return &ValidationError{Host: rawURL, Reason: err.Error()}
	}
	for {
		v.mu.Lock()
		if until, ok := v.seen[host]; ok && v.now().Before(until) {
			v.mu.Unlock()
			return nil
		}
		if f, ok := v.failed[host]; ok && v.now().Before(f.until) {
			v.mu.Unlock()
			return f.err
		}
		wait, busy := v.flight[host]
		if !busy {
			done := make(chan struct{})
			v.flight[host] = done
			v.mu.Unlock()
			err := v.check(ctx, rawURL, host)
			v.mu.Lock()
			delete(v.flight, host)
			close(done)
			v.mu.Unlock()
			return err
		}
		v.mu.Unlock()
		select { // another attempt checks this host: wait for its answer
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// check asks Redis, then the host itself.
func (v *Validator) check(ctx context.Context, rawURL, host string) error {
	if ok, err := v.store.HostValidated(ctx, host); err != nil {
		return err
	} else if ok {
		v.remember(host)
		return nil
	}
	if err := v.challenge(ctx, rawURL, host); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			v.mu.Lock()
			v.prune()
			v.failed[host] = failure{err: err, until: v.now().Add(failBackoff)}
			v.mu.Unlock()
		}
		return err
	}
	if err := v.store.MarkHostValidated(ctx, host, v.ttl); err != nil {
		return err
	}
	v.remember(host)
	return nil
}

// prune drops expired entries once the caches are large. v.mu is held.
func (v *Validator) prune() {
	if len(v.seen)+len(v.failed) < maxHosts {
		return
	}
	now := v.now()
	for h, until := range v.seen {
		if now.After(until) {
			delete(v.seen, h)
		}
	}
	for h, f := range v.failed {
		if now.After(f.until) {
			delete(v.failed, h)
		}
	}
	if len(v.seen) >= maxHosts { // still full of live entries: start over
		clear(v.seen)
	}
}

func (v *Validator) remember(host string) {
	v.mu.Lock()
	v.prune()
	delete(v.failed, host)
	// The local cache is short: a validation dropped from Redis (expired)
	// is asked again soon everywhere.
	v.seen[host] = v.now().Add(min(v.ttl, 5*time.Minute))
	v.mu.Unlock()
}

// challenge sends the validation GET and checks the echo.
func (v *Validator) challenge(ctx context.Context, rawURL, host string) error {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	u, _ := url.Parse(rawURL)
	q := u.Query()
	q.Set(webhook.QueryValidationToken, token)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return &ValidationError{Host: host, Reason: err.Error()}
	}
	resp, err := v.client.Do(req)
	if err != nil {
		var blocked *ssrf.BlockedError
		if errors.As(err, &blocked) {
			return err
		}
		return &ValidationError{Host: host, Reason: "GET ?validationToken: " + errorText(err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	switch {
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return &ValidationError{Host: host, Reason: fmt.Sprintf("GET ?validationToken answered %d", resp.StatusCode)}
	case strings.TrimSpace(string(body)) != token:
		return &ValidationError{Host: host, Reason: "GET ?validationToken did not echo the token in the response body"}
	}
	return nil
}
