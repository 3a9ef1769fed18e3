package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"
)

// endpoint is a webhook endpoint's health as the API lists it.
type endpoint struct {
	ID                  string     `json:"id"`
	URL                 string     `json:"url"`
	State               string     `json:"state"`
	Succeeded           int64      `json:"succeeded"`
	Failed              int64      `json:"failed"`
	SuccessRate         *float64   `json:"successRate"`
	ConsecutiveFailures int64      `json:"consecutiveFailures"`
	LastError           string     `json:"lastError"`
	LastErrorAt         *time.Time `json:"lastErrorAt"`
	DisabledAt          *time.Time `json:"disabledAt"`
}

// configHealth is a push config's health as the API shows it.
type configHealth struct {
	TaskID              string     `json:"taskId"`
	ConfigID            string     `json:"configId"`
	URL                 string     `json:"url"`
	Succeeded           int64      `json:"succeeded"`
	Failed              int64      `json:"failed"`
	ConsecutiveFailures int64      `json:"consecutiveFailures"`
	LastError           string     `json:"lastError"`
	LastSuccess         *time.Time `json:"lastSuccess"`
}

// endpoints prints the webhook endpoints' health: disabled ones first;
// with configs, each followed by the push configs that send to it (one
// more call per endpoint).
func (m *mgmt) endpoints(ctx context.Context, limit int, configs bool) error {
	var raw json.RawMessage
	if err := m.call(ctx, http.MethodGet, "/v1/endpoints?limit="+strconv.Itoa(limit), &raw); err != nil {
		return err
	}
	var res struct{ Endpoints []endpoint }
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	if m.json && !configs {
		_, err := fmt.Fprintln(m.out, string(raw))
		return err
	}
	full := make([]json.RawMessage, len(res.Endpoints))
	cfgs := make([][]configHealth, len(res.Endpoints))
	for i, e := range res.Endpoints {
		if !configs {
			break
		}
		if err := m.call(ctx, http.MethodGet, "/v1/endpoints/"+url.PathEscape(e.ID), &full[i]); err != nil {
			return err
		}
		var one struct{ Configs []configHealth }
		if err := json.Unmarshal(full[i], &one); err != nil {
			return err
		}
		cfgs[i] = one.Configs
	}
	if m.json {
		return json.NewEncoder(m.out).Encode(map[string]any{"endpoints": full})
	}
	w := tabwriter.NewWriter(m.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ENDPOINT\tSTATE\tSUCCESS (24H)\tFAILING\tLAST ERROR\tURL")
	for i, e := range res.Endpoints {
		rate := "-"
		if e.SuccessRate != nil {
			rate = fmt.Sprintf("%.1f%% of %d", *e.SuccessRate*100, e.Succeeded+e.Failed)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d in a row\t%s\t%s\n", printable(e.ID), printable(e.State), rate, e.ConsecutiveFailures,
			shortError(e.LastError), printable(e.URL))
		for _, c := range cfgs[i] {
			fmt.Fprintf(w, "  config %s/%s\t\t%d ok, %d failed\t%d in a row\t%s\t\n", printable(c.TaskID), printable(c.ConfigID),
				c.Succeeded, c.Failed, c.ConsecutiveFailures, shortError(c.LastError))
		}
	}
	return w.Flush()
}

// configHealthOf prints one push config's health.
func (m *mgmt) configHealthOf(ctx context.Context, task, config string) error {
	var raw json.RawMessage
	if err := m.call(ctx, http.MethodGet, "/v1/configs/"+url.PathEscape(task)+"/"+url.PathEscape(config)+"/health", &raw); err != nil {
		return err
	}
	if m.json {
		_, err := fmt.Fprintln(m.out, string(raw))
		return err
	}
	var c configHealth
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	last := "never"
	if c.LastSuccess != nil {
		last = c.LastSuccess.UTC().Format(time.RFC3339)
	}
	_, err := fmt.Fprintf(m.out, "config %s/%s -> %s\n%d ok, %d failed, %d in a row; last success %s\nlast error: %s\n",
		printable(c.TaskID), printable(c.ConfigID), printable(c.URL), c.Succeeded, c.Failed, c.ConsecutiveFailures, last,
		cmp.Or(printable(c.LastError), "-"))
	return err
}

// shortError is an error for a table cell: printable, at most 50 runes.
func shortError(s string) string {
	last := []rune(printable(s))
	if len(last) > 50 {
		last = append(last[:47], []rune("...")...)
	}
	return string(last)
}

// enable enables endpoints again.
func (m *mgmt) enable(ctx context.Context, ids []string) error {
	failed := 0
	for _, id := range ids {
		err := m.call(ctx, http.MethodPost, "/v1/endpoints/"+url.PathEscape(id)+"/enable", nil)
		switch {
		case m.json:
			res := map[string]any{"id": id, "ok": err == nil}
			if err != nil {
				res["error"] = err.Error()
			}
			_ = json.NewEncoder(m.out).Encode(res)
		case err != nil:
			fmt.Fprintf(m.out, "%s: %v\n", printable(id), err)
		default:
			fmt.Fprintf(m.out, "%s: enabled (notifications skipped while it was disabled are not resent by this)\n", printable(id))
		}
		if err != nil {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d not enabled", failed, len(ids))
	}
	return nil
}
