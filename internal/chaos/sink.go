package chaos

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2arelay/relay/webhook"
)

// Receipt is one POST the sink received.
type Receipt struct {
	// N numbers the receipts in the order the sink took them.
	N  int
	At time.Time
	// NID is the A2A-Notification-Id header.
	NID  string
	Task string
	// Kind is task, status or artifact; State the task state it carries.
	Kind, State string
	// Seq and EmitNs are the demo agent's metadata (0 for the task event).
	Seq    int
	EmitNs int64
	// Code is the HTTP status the sink answered.
	Code int
	// Problem says what was wrong with the request, if anything.
	Problem string
}

// Accepted reports whether the sink answered the receipt with a 2xx.
func (r Receipt) Accepted() bool { return r.Code >= 200 && r.Code < 300 }

// SinkConfig says how the sink fails.
type SinkConfig struct {
	// FailRate is the share of requests answered 500 at random.
	FailRate float64
	// Unavailable picks the tasks whose notifications are answered 503 with
	// Retry-After for UnavailableFor after the sink first saw the task.
	Unavailable    func(taskID string) bool
	UnavailableFor time.Duration
	// RetryAfter is the Retry-After value of those 503s (seconds).
	RetryAfter int
	// SlowRate is the share of accepted requests answered only after
	// SlowDelay; HangRate the share answered after HangDelay, which should
	// exceed relay's delivery timeout: relay gives up on the POST and sends
	// the notification again although the sink took it.
	SlowRate, HangRate   float64
	SlowDelay, HangDelay time.Duration
	// Seed seeds the random failures.
	Seed uint64
}

// Sink is a webhook receiver on loopback that records every notification
// and fails some on purpose.
type Sink struct {
	cfg SinkConfig
	srv *http.Server
	ln  net.Listener

	mu        sync.Mutex
	rnd       *rand.Rand
	receipts  []Receipt
	firstSeen map[string]time.Time // task -> first receipt
	accepted  map[string]int       // notification id -> index of its first accepted receipt
}

// NewSink starts a sink on a free 127.0.0.1 port.
func NewSink(cfg SinkConfig) (*Sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: cfg, ln: ln, rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		firstSeen: map[string]time.Time{}, accepted: map[string]int{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the webhook URL to register.
func (s *Sink) URL() string { return "http://" + s.ln.Addr().String() + "/hook" }

// Close stops the sink.
func (s *Sink) Close() { _ = s.srv.Close() }

// v10Notification is the part of a v1.0 StreamResponse the sink reads.
type v10Notification struct {
	Task *struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	} `json:"task"`
	StatusUpdate *struct {
		TaskID string `json:"taskId"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Metadata demoMeta `json:"metadata"`
	} `json:"statusUpdate"`
	ArtifactUpdate *struct {
		TaskID   string   `json:"taskId"`
		Metadata demoMeta `json:"metadata"`
	} `json:"artifactUpdate"`
}

// demoMeta is what the demo agent stamps on each event it emits.
type demoMeta struct {
	EmitNs string `json:"emitNs"`
	Seq    int    `json:"seq"`
}

func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(r.Body)
	rc := Receipt{At: now, NID: r.Header.Get(webhook.HeaderID)}
	var problems []string
	if err != nil {
		problems = append(problems, "read body: "+err.Error())
	}
	var n v10Notification
	if err := json.Unmarshal(body, &n); err != nil {
		problems = append(problems, "body is not JSON: "+err.Error())
	}
	var meta demoMeta
	switch {
	case n.Task != nil:
		rc.Kind, rc.Task, rc.State = "task", n.Task.ID, n.Task.Status.State
	case n.StatusUpdate != nil:
		rc.Kind, rc.Task, rc.State, meta = "status", n.StatusUpdate.TaskID, n.StatusUpdate.Status.State, n.StatusUpdate.Metadata
	case n.ArtifactUpdate != nil:
		rc.Kind, rc.Task, meta = "artifact", n.ArtifactUpdate.TaskID, n.ArtifactUpdate.Metadata
	default:
		problems = append(problems, "not a v1.0 StreamResponse: "+truncate(string(body), 200))
	}
	rc.Seq = meta.Seq
	rc.EmitNs, _ = strconv.ParseInt(meta.EmitNs, 10, 64)
	if rc.NID == "" {
		problems = append(problems, "no A2A-Notification-Id")
	}
	if v := r.Header.Get(webhook.HeaderVersion); v != "1.0" {
		problems = append(problems, "A2A-Version "+v)
	}
	if p := checkJWT(r.Header.Get(webhook.HeaderJWT), rc.NID, rc.Task); p != "" {
		problems = append(problems, p)
	}
	rc.Problem = strings.Join(problems, "; ")

	s.mu.Lock()
	first, seen := s.firstSeen[rc.Task]
	if !seen {
		first = now
		s.firstSeen[rc.Task] = now
	}
	switch {
	case s.cfg.Unavailable != nil && s.cfg.Unavailable(rc.Task) && now.Sub(first) < s.cfg.UnavailableFor:
		rc.Code = http.StatusServiceUnavailable
	case s.rnd.Float64() < s.cfg.FailRate:
		rc.Code = http.StatusInternalServerError
	default:
		rc.Code = http.StatusNoContent
	}
	var delay time.Duration
	if rc.Accepted() {
		switch x := s.rnd.Float64(); {
		case x < s.cfg.HangRate:
			delay = s.cfg.HangDelay
		case x < s.cfg.HangRate+s.cfg.SlowRate:
			delay = s.cfg.SlowDelay
		}
	}
	rc.N = len(s.receipts)
	s.receipts = append(s.receipts, rc)
	if _, ok := s.accepted[rc.NID]; !ok && rc.Accepted() {
		s.accepted[rc.NID] = rc.N
	}
	s.mu.Unlock()

	// The receipt counts from its arrival: a receiver that takes too long
	// to answer has still taken the notification.
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
	}
	if rc.Code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(s.cfg.RetryAfter))
	}
	w.WriteHeader(rc.Code)
}

// checkJWT compares the claims of the notification's JWT (not its
// signature) with its headers and body.
func checkJWT(token, nid, task string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "no A2A-Notification-JWT"
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "JWT payload: " + err.Error()
	}
	var c webhook.Claims
	if err := json.Unmarshal(b, &c); err != nil {
		return "JWT payload: " + err.Error()
	}
	if c.ID != nid || c.TaskID != task {
		return "JWT jti/taskId " + c.ID + "/" + c.TaskID + " do not match " + nid + "/" + task
	}
	return ""
}

// Receipts returns a copy of every receipt so far, in arrival order.
func (s *Sink) Receipts() []Receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Receipt(nil), s.receipts...)
}

// Missing returns the notification ids of want that the sink has not
// accepted yet.
func (s *Sink) Missing(want []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range want {
		if _, ok := s.accepted[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
