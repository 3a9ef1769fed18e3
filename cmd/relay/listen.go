package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2arelay/relay/webhook"
)

// listenUsage heads relay listen --help.
const listenUsage = `Usage: relay listen [flags]

A development webhook receiver: it verifies every notification relay sends (JWT against the
relay's JWKS, audience, body hash, token, replay) and prints it as it arrives. Register
http://<addr><path> as a push config URL (relay must allow the address: RELAY_WEBHOOK_ALLOW_CIDRS).
--fail and --delay rehearse retries: --fail 503 answers 503 always, --fail 500x2 fails the first
two attempts of each notification, --fail-rate 0.3 fails 30% at random.

`

// listener is the state of relay listen.
type listener struct {
	out      io.Writer
	color    bool
	json     bool
	failCode int
	failN    int     // fail the first failN attempts of each notification (0: every one)
	failRate float64 // fail at random with this probability (0: off)
	delay    time.Duration
	verifier *webhook.Verifier

	mu       sync.Mutex
	attempts map[string]int // notification id -> attempts seen
}

func listenCmd(args []string, env func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, listenUsage); fs.PrintDefaults() }
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	path := fs.String("path", "/", "path notifications are POSTed to")
	relayURL := fs.String("relay", cmp.Or(env("RELAY_URL"), "http://localhost:8080"), "relay's public URL (the JWT issuer; its JWKS is fetched from it)")
	audience := fs.String("audience", "", "the webhook URL as registered (default http://<addr><path>)")
	token := fs.String("token", "", "the push config token to expect (default: not checked)")
	noVerify := fs.Bool("no-verify", false, "print notifications without verifying them")
	l := &listener{out: stdout, attempts: map[string]int{}}
	fail := fs.String("fail", "", "answer this status instead of 204: 503 (always) or 500x2 (the first 2 attempts of each notification)")
	fs.Float64Var(&l.failRate, "fail-rate", 0, "with --fail, fail this fraction of requests at random instead (0 to 1)")
	fs.DurationVar(&l.delay, "delay", 0, "wait this long before answering")
	fs.BoolVar(&l.json, "json", false, "print one JSON object per notification")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := l.parseFail(*fail); err != nil {
		fmt.Fprintf(stderr, "relay listen: --fail: %v\n", err)
		return 2
	}
	if f, ok := stdout.(*os.File); ok && !l.json {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && env("NO_COLOR") == "" {
			l.color = true
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "relay listen: %v\n", err)
		return 1
	}
	aud := cmp.Or(*audience, "http://"+ln.Addr().String()+*path)
	if !*noVerify {
		l.verifier, err = webhook.NewVerifier(webhook.Config{Issuer: *relayURL, Audience: aud, Token: *token})
		if err != nil {
			fmt.Fprintf(stderr, "relay listen: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "relay listen: receiving on %s (verifying against %s)\n", aud, *relayURL)
	if err := l.serve(ctx, ln, *path); err != nil {
		fmt.Fprintf(stderr, "relay listen: %v\n", err)
		return 1
	}
	return 0
}

func (l *listener) parseFail(v string) error {
	if v == "" {
		return nil
	}
	code, n, _ := strings.Cut(v, "x")
	c, err := strconv.Atoi(code)
	if err != nil || c < 100 || c > 599 {
		return fmt.Errorf("%q: want a status code, optionally x<attempts> (503, 500x2)", v)
	}
	l.failCode = c
	if n != "" {
		if l.failN, err = strconv.Atoi(n); err != nil || l.failN < 1 {
			return fmt.Errorf("%q: the attempt count after x must be a positive number", v)
		}
	}
	if l.failRate < 0 || l.failRate > 1 {
		return errors.New("--fail-rate must be between 0 and 1")
	}
	return nil
}

// serve receives until ctx ends.
func (l *listener) serve(ctx context.Context, ln net.Listener, path string) error {
	mux := http.NewServeMux()
	mux.HandleFunc(path, l.handle)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (l *listener) handle(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	if tok := r.URL.Query().Get(webhook.QueryValidationToken); r.Method == http.MethodGet && tok != "" {
		if !plainToken(tok) {
			http.Error(w, "bad validationToken", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = io.WriteString(w, tok) // webhook URL validation
		l.line("validation", "", "answered relay's validationToken check", "", "")
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST notifications here", http.StatusMethodNotAllowed)
		return
	}
	var n *webhook.Notification
	var err error
	if l.verifier != nil {
		n, err = l.verifier.Verify(r)
	} else {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		n, err = webhook.Decode(webhook.Dialect(r.Header.Get(webhook.HeaderVersion)), body)
		if n != nil {
			n.ID = r.Header.Get("A2A-Notification-Id")
		}
	}
	if errors.Is(err, webhook.ErrReplayed) {
		l.line("replayed", r.Header.Get("A2A-Notification-Id"), "already processed: acknowledged", "", "")
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		l.line("rejected", r.Header.Get("A2A-Notification-Id"), err.Error(), "", "")
		http.Error(w, err.Error(), webhook.StatusCode(err))
		return
	}
	l.mu.Lock()
	if len(l.attempts) >= 100000 { // a long session: forget, rather than grow
		clear(l.attempts)
	}
	l.attempts[n.ID]++
	attempt := l.attempts[n.ID]
	l.mu.Unlock()
	status := http.StatusNoContent
	switch {
	case l.failCode != 0 && l.failRate > 0:
		if rand.Float64() < l.failRate {
			status = l.failCode
		}
	case l.failCode != 0 && (l.failN == 0 || attempt <= l.failN):
		status = l.failCode
	}
	if l.delay > 0 {
		time.Sleep(l.delay)
	}
	latency := ""
	if st := statusOf(n); st != nil {
		if at, err := time.Parse(time.RFC3339Nano, st.Timestamp); err == nil {
			latency = now.Sub(at).Round(time.Millisecond).String() + " since commit"
		}
	}
	if l.json {
		l.mu.Lock()
		_ = json.NewEncoder(l.out).Encode(map[string]any{"time": now.UTC(), "id": n.ID, "taskId": n.TaskID, "kind": n.Kind,
			"state": n.State, "dialect": n.Dialect, "attempt": attempt, "answer": status, "body": json.RawMessage(n.Body)})
		l.mu.Unlock()
	} else {
		what := string(n.Kind)
		if n.State != "" {
			what += " " + string(n.State)
		}
		if n.Artifact != nil {
			what += fmt.Sprintf(" artifact %s (%d parts)", n.Artifact.ArtifactID, len(n.Artifact.Parts))
		}
		l.line(fmt.Sprintf("%d", status), n.ID, fmt.Sprintf("task %s  %s  v%s  attempt %d", n.TaskID, what, n.Dialect, attempt), latency, string(n.State))
	}
	if status >= 200 && status < 300 && l.verifier != nil {
		l.verifier.Done(n)
	}
	w.WriteHeader(status)
}

// plainToken accepts the tokens relay sends (hex) and nothing that could
// be markup.
func plainToken(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// statusOf is the status a notification carries (its own or its task's).
func statusOf(n *webhook.Notification) *webhook.Status {
	if n.Status != nil {
		return n.Status
	}
	if n.Task != nil {
		return &n.Task.Status
	}
	return nil
}

// line prints one event: what happened, to which notification, details.
func (l *listener) line(tag, id, text, latency, state string) {
	if l.json && tag != "rejected" {
		return
	}
	c, reset := "", ""
	if l.color {
		reset = "\033[0m"
		switch {
		case tag == "rejected" || strings.HasPrefix(tag, "5") || strings.HasPrefix(tag, "4"):
			c = "\033[31m" // red
		case state == "completed":
			c = "\033[32m" // green
		case state == "failed" || state == "canceled" || state == "rejected":
			c = "\033[33m" // yellow
		default:
			c = "\033[36m" // cyan
		}
	}
	if latency != "" {
		latency = "  (" + latency + ")"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "%s %s%-8s%s %s  %s%s\n", time.Now().Format("15:04:05.000"), c, tag, reset, printable(id), printable(text), latency)
}
