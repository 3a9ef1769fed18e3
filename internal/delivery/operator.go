package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Alert is what an operator webhook receives when a delivery needs a human:
// a config disabled by 410 Gone, a notification sent to dead letters (its
// retries exhausted), an endpoint that started failing or was disabled.
type Alert struct {
	// Event is "config.disabled", "delivery.dead", "endpoint.failing" or
	// "endpoint.disabled" (the endpoint ones name no task, config or
	// notification).
	Event          string    `json:"event"`
	Time           time.Time `json:"time"`
	TaskID         string    `json:"taskId"`
	ConfigID       string    `json:"configId"`
	NotificationID string    `json:"notificationId"`
	URL            string    `json:"url,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	Attempt        int       `json:"attempt"`
	// EndpointID names the webhook endpoint (its health: /v1/endpoints).
	EndpointID string `json:"endpointId,omitempty"`
	// Failures and FailingSince tell an endpoint's current failure run.
	Failures     int64      `json:"failures,omitempty"`
	FailingSince *time.Time `json:"failingSince,omitempty"`
}

// Operator posts Alerts to an operator's URL, in the background: a slow or
// failing operator endpoint never slows delivery. Alerts beyond a bounded
// backlog are dropped with a log line.
type Operator struct {
	url, token string
	client     *http.Client
	log        *slog.Logger
	queue      chan Alert
	done       chan struct{}
}

// OperatorDeps are what an Operator works with.
type OperatorDeps struct {
	Log *slog.Logger
}

// OperatorConfig says where an Operator posts
// (RELAY_OPERATOR_WEBHOOK_URL, RELAY_OPERATOR_WEBHOOK_TOKEN).
type OperatorConfig struct {
	// URL receives the alerts (an absolute http or https URL).
	URL string
	// Token, when set, is sent as Authorization: Bearer <Token>.
	Token string
}

// NewOperator returns an Operator, or an error when its URL is not an
// absolute http or https URL. Run sends.
func NewOperator(d OperatorDeps, cfg OperatorConfig) (*Operator, error) {
	if u, err := url.Parse(cfg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("delivery: operator: URL must be an absolute http or https URL")
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Operator{url: cfg.URL, token: cfg.Token, log: d.Log, client: &http.Client{Timeout: 10 * time.Second},
		queue: make(chan Alert, 1024), done: make(chan struct{})}, nil
}

// Notify queues an alert; it never blocks.
func (o *Operator) Notify(a Alert) {
	select {
	case o.queue <- a:
	default:
		o.log.Warn("operator alert dropped: backlog full", "event", a.Event, "notification_id", a.NotificationID)
	}
}

// Run sends queued alerts until ctx ends, each tried 3 times; then it
// sends what is still queued, once each, for a few seconds at most.
func (o *Operator) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			o.drain()
			return
		case a := <-o.queue:
			var err error
			for try := range 3 {
				// The send itself is not cut by ctx (an alert taken from
				// the queue is sent); only the pauses between tries are.
				if err = o.send(context.WithoutCancel(ctx), a); err == nil || ctx.Err() != nil {
					break
				}
				sleep(ctx, time.Duration(try+1)*time.Second)
			}
			if err != nil && ctx.Err() == nil {
				// errorText: the URL may hold a secret (chat webhook URLs do).
				o.log.Warn("operator alert not delivered", "event", a.Event, "notification_id", a.NotificationID, "err", errorText(err))
			}
		}
	}
}

// drain sends the alerts still queued at shutdown, within 5 seconds.
func (o *Operator) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		select {
		case a := <-o.queue:
			if err := o.send(ctx, a); err != nil {
				o.log.Warn("operator alert not delivered at shutdown", "event", a.Event, "notification_id", a.NotificationID, "err", errorText(err),
					"still_queued", len(o.queue))
			}
		default:
			return
		}
	}
}

func (o *Operator) send(ctx context.Context, a Alert) error {
	body, _ := json.Marshal(a)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return fmt.Errorf("operator webhook answered %d", resp.StatusCode)
	}
	return nil
}
