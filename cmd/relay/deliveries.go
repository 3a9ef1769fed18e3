package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// deliveriesUsage heads relay deliveries --help.
const deliveriesUsage = `Usage:
  relay deliveries list [--task ID] [--config ID] [--status S] [--since 1h] [--limit N] [--all]
  relay deliveries show <delivery id>
  relay deliveries redeliver <delivery id>...
  relay deliveries redrive [--task ID]
  relay deliveries endpoints [--limit N] [--configs]
  relay deliveries endpoints --task ID --config ID
  relay deliveries enable <endpoint id>...
  relay deliveries replay (--task ID [--config ID] | --webhook URL) --since 2h|TIME [--until 1h|TIME]

The management API of a running relay: --url (RELAY_URL, default http://localhost:8080) and
--token (RELAY_ADMIN_TOKEN) reach it; --json prints the API's JSON for scripts.
Statuses: pending, failed, dead, disabled, dropped, and delivered (with --task).
endpoints lists the webhook endpoints' health (disabled ones first), with --configs each endpoint's
push configs and theirs; with --task and --config, one push config's health. enable enables a
disabled endpoint again.
replay sends again, with their ids, every notification of a task's configs (or of every config
that sends to a webhook URL) committed since a time, up to the bound RELAY_REPLAY_MAX_NOTIFICATIONS.

`

// mgmt is a client of the management API.
type mgmt struct {
	base, token string
	http        *http.Client
	out, err    io.Writer
	json        bool
}

// delivery is a record as the API lists it.
type delivery struct {
	ID          string            `json:"id"`
	TaskID      string            `json:"taskId"`
	ConfigID    string            `json:"configId"`
	Status      string            `json:"status"`
	Attempts    int               `json:"attempts"`
	Created     time.Time         `json:"created"`
	Updated     time.Time         `json:"updated"`
	NextAttempt *time.Time        `json:"nextAttempt"`
	AttemptLog  []json.RawMessage `json:"attemptLog"`
}

type attemptRow struct {
	Time       time.Time `json:"time"`
	Attempt    int       `json:"attempt"`
	URL        string    `json:"url"`
	Status     int       `json:"status"`
	ErrorClass string    `json:"errorClass"`
	Error      string    `json:"error"`
	LatencyMs  float64   `json:"latencyMs"`
	Response   string    `json:"response"`
	Outcome    string    `json:"outcome"`
}

func deliveriesCmd(args []string, env func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) == 0 {
			fmt.Fprint(stderr, deliveriesUsage)
			return 2
		}
		fmt.Fprint(stdout, deliveriesUsage)
		return 0
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("deliveries "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	m := &mgmt{http: &http.Client{Timeout: 30 * time.Second}, out: stdout, err: stderr}
	fs.StringVar(&m.base, "url", cmp.Or(env("RELAY_URL"), "http://localhost:8080"), "relay's base URL")
	fs.StringVar(&m.token, "token", env("RELAY_ADMIN_TOKEN"), "admin token (RELAY_ADMIN_TOKEN)")
	fs.BoolVar(&m.json, "json", false, "print JSON")
	task := fs.String("task", "", "a task id")
	config := fs.String("config", "", "a push config id (with --task)")
	status := fs.String("status", "", "pending, failed, dead, disabled, dropped, delivered")
	var since time.Duration
	var rf replayFlags
	fs.Func("since", "list: only deliveries updated within this duration (e.g. 1h); replay: from this time (a duration ago, or RFC 3339)", func(v string) error {
		rf.since = v
		if sub == "replay" {
			return nil
		}
		d, err := time.ParseDuration(v)
		since = d
		return err
	})
	limit := fs.Int("limit", 50, "deliveries per page (1 to 500)")
	all := fs.Bool("all", false, "follow every page")
	configs := fs.Bool("configs", false, "endpoints: list each endpoint's push configs with their health")
	fs.StringVar(&rf.webhook, "webhook", "", "replay: every config that sends to this webhook URL")
	fs.StringVar(&rf.until, "until", "", "replay: up to this time (a duration ago, or RFC 3339)")
	// Flags may come before or after the ids.
	var ids []string
	for {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		ids, rest = append(ids, fs.Arg(0)), fs.Args()[1:]
	}
	if (sub == "list" || sub == "redrive" || sub == "endpoints" || sub == "replay") && len(ids) > 0 {
		fmt.Fprintf(stderr, "relay deliveries %s: unexpected argument %q (use --task)\n", sub, ids[0])
		return 2
	}
	m.base = strings.TrimSuffix(m.base, "/")
	ctx := context.Background()
	var err error
	switch sub {
	case "list":
		err = m.list(ctx, *task, *config, *status, since, *limit, *all)
	case "show":
		if len(ids) != 1 {
			fmt.Fprintln(stderr, "usage: relay deliveries show <delivery id>")
			return 2
		}
		err = m.show(ctx, ids[0])
	case "redeliver":
		if len(ids) == 0 {
			fmt.Fprintln(stderr, "usage: relay deliveries redeliver <delivery id>...")
			return 2
		}
		err = m.redeliver(ctx, ids)
	case "redrive":
		err = m.redrive(ctx, *task)
	case "endpoints":
		switch {
		case *task != "" || *config != "":
			if *task == "" || *config == "" {
				fmt.Fprintln(stderr, "usage: relay deliveries endpoints --task ID --config ID")
				return 2
			}
			err = m.configHealthOf(ctx, *task, *config)
		default:
			err = m.endpoints(ctx, *limit, *configs)
		}
	case "enable":
		if len(ids) == 0 {
			fmt.Fprintln(stderr, "usage: relay deliveries enable <endpoint id>...")
			return 2
		}
		err = m.enable(ctx, ids)
	case "replay":
		rf.task, rf.config = *task, *config
		err = m.replayWindow(ctx, rf, time.Now())
	default:
		fmt.Fprintf(stderr, "relay deliveries: unknown command %q\n\n%s", sub, deliveriesUsage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "relay deliveries %s: %v\n", sub, err)
		return 1
	}
	return 0
}

// call sends one request and decodes a JSON answer into out; an error
// answer becomes an error with the API's message.
func (m *mgmt) call(ctx context.Context, method, path string, out any) error {
	return m.send(ctx, method, path, nil, out)
}

// send is call with a JSON body (nil: none).
func (m *mgmt) send(ctx context.Context, method, path string, reqBody io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, reqBody)
	if err != nil {
		return err
	}
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if m.token != "" {
		req.Header.Set("Authorization", "Bearer "+m.token)
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = body
		return nil
	}
	return json.Unmarshal(body, out)
}

func (m *mgmt) list(ctx context.Context, task, config, status string, since time.Duration, limit int, all bool) error {
	q := url.Values{}
	for k, v := range map[string]string{"task": task, "config": config, "status": status} {
		if v != "" {
			q.Set(k, v)
		}
	}
	q.Set("limit", strconv.Itoa(limit))
	var rows []delivery
	cutoff := time.Time{}
	if since > 0 {
		cutoff = time.Now().Add(-since)
	}
	for page := 1; ; page++ {
		var res struct {
			Deliveries []delivery `json:"deliveries"`
			NextCursor string     `json:"nextCursor"`
		}
		if err := m.call(ctx, http.MethodGet, "/v1/deliveries?"+q.Encode(), &res); err != nil {
			return err
		}
		old := false
		for _, d := range res.Deliveries {
			if !cutoff.IsZero() && d.Updated.Before(cutoff) {
				old = true
				continue
			}
			rows = append(rows, d)
		}
		if !all || res.NextCursor == "" || old {
			break
		}
		if !m.json {
			fmt.Fprintf(m.err, "\r%d deliveries (page %d)…", len(rows), page)
		}
		q.Set("cursor", res.NextCursor)
	}
	if all && !m.json {
		fmt.Fprintln(m.err)
	}
	if m.json {
		return json.NewEncoder(m.out).Encode(map[string]any{"deliveries": rows})
	}
	w := tabwriter.NewWriter(m.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DELIVERY\tTASK\tCONFIG\tSTATUS\tATTEMPTS\tUPDATED\tNEXT")
	for _, d := range rows {
		next := "-"
		if d.NextAttempt != nil {
			next = d.NextAttempt.Local().Format(time.TimeOnly)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", printable(d.ID), printable(d.TaskID), printable(d.ConfigID), printable(d.Status), d.Attempts,
			d.Updated.Local().Format(time.DateTime), next)
	}
	return w.Flush()
}

func (m *mgmt) show(ctx context.Context, id string) error {
	if m.json {
		var raw json.RawMessage
		if err := m.call(ctx, http.MethodGet, "/v1/deliveries/"+url.PathEscape(id), &raw); err != nil {
			return err
		}
		_, err := fmt.Fprintln(m.out, string(raw))
		return err
	}
	var d delivery
	if err := m.call(ctx, http.MethodGet, "/v1/deliveries/"+url.PathEscape(id), &d); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "delivery %s\ntask     %s\nconfig   %s\nstatus   %s (%d attempts)\ncreated  %s\n",
		printable(d.ID), printable(d.TaskID), printable(d.ConfigID), printable(d.Status), d.Attempts, d.Created.Local().Format(time.DateTime))
	if d.NextAttempt != nil {
		fmt.Fprintf(m.out, "next     %s (in %s)\n", d.NextAttempt.Local().Format(time.DateTime), time.Until(*d.NextAttempt).Round(time.Second))
	}
	fmt.Fprintln(m.out)
	w := tabwriter.NewWriter(m.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tTIME\tSTATUS\tCLASS\tLATENCY\tOUTCOME\tERROR / RESPONSE")
	for _, raw := range d.AttemptLog {
		var a attemptRow
		if err := json.Unmarshal(raw, &a); err != nil {
			continue
		}
		status := "-"
		if a.Status != 0 {
			status = strconv.Itoa(a.Status)
		}
		detail := []rune(printable(cmp.Or(a.Error, a.Response)))
		if len(detail) > 60 {
			detail = append(detail[:57], []rune("...")...)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%.1fms\t%s\t%s\n", a.Attempt, a.Time.Local().Format(time.TimeOnly), status,
			printable(cmp.Or(a.ErrorClass, "-")), a.LatencyMs, printable(a.Outcome), string(detail))
	}
	return w.Flush()
}

// printable replaces control characters (C0, DEL, C1: escape sequences a
// webhook's answer or a client-chosen id could smuggle to the terminal)
// and tabs with a visible stand-in.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func (m *mgmt) redeliver(ctx context.Context, ids []string) error {
	var failed []string
	for i, id := range ids {
		err := m.call(ctx, http.MethodPost, "/v1/deliveries/"+url.PathEscape(id)+"/redeliver", nil)
		switch {
		case m.json:
			res := map[string]any{"id": id, "ok": err == nil}
			if err != nil {
				res["error"] = err.Error()
			}
			_ = json.NewEncoder(m.out).Encode(res)
		case err != nil:
			fmt.Fprintf(m.out, "[%d/%d] %s: %v\n", i+1, len(ids), id, err)
		default:
			fmt.Fprintf(m.out, "[%d/%d] %s: queued again\n", i+1, len(ids), id)
		}
		if err != nil {
			failed = append(failed, id)
		}
	}
	if len(failed) > 0 {
		return errors.New(strconv.Itoa(len(failed)) + " of " + strconv.Itoa(len(ids)) + " not redelivered")
	}
	return nil
}

func (m *mgmt) redrive(ctx context.Context, task string) error {
	path := "/v1/deliveries/redrive"
	if task != "" {
		path += "?task=" + url.QueryEscape(task)
	}
	var res map[string]any
	if err := m.call(ctx, http.MethodPost, path, &res); err != nil {
		return err
	}
	if m.json {
		return json.NewEncoder(m.out).Encode(res)
	}
	fmt.Fprintf(m.out, "redrove %v dead letters\n", res["redriven"])
	return nil
}
