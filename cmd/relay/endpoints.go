package main

import (
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

// endpoints prints the webhook endpoints' health: disabled ones first.
func (m *mgmt) endpoints(ctx context.Context, limit int) error {
	var raw json.RawMessage
	if err := m.call(ctx, http.MethodGet, "/v1/endpoints?limit="+strconv.Itoa(limit), &raw); err != nil {
		return err
	}
	if m.json {
		_, err := fmt.Fprintln(m.out, string(raw))
		return err
	}
	var res struct{ Endpoints []endpoint }
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	w := tabwriter.NewWriter(m.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ENDPOINT\tSTATE\tSUCCESS (24H)\tFAILING\tLAST ERROR\tURL")
	for _, e := range res.Endpoints {
		rate := "-"
		if e.SuccessRate != nil {
			rate = fmt.Sprintf("%.1f%% of %d", *e.SuccessRate*100, e.Succeeded+e.Failed)
		}
		last := []rune(printable(e.LastError))
		if len(last) > 50 {
			last = append(last[:47], []rune("...")...)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d in a row\t%s\t%s\n", printable(e.ID), printable(e.State), rate, e.ConsecutiveFailures,
			string(last), printable(e.URL))
	}
	return w.Flush()
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
