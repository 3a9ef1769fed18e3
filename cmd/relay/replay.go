package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// replayFlags are the flags of relay deliveries replay.
type replayFlags struct {
	task, config, webhook, since, until string
}

// replayWindow asks relay to replay the notifications of a window
// (POST /v1/deliveries/replay).
func (m *mgmt) replayWindow(ctx context.Context, f replayFlags, now time.Time) error {
	if (f.webhook == "") == (f.task == "") {
		return errors.New("give --webhook <url>, or --task <id> (with --config <id> or not)")
	}
	if f.since == "" {
		return errors.New("--since is required (a duration ago, e.g. 2h, or an RFC 3339 time)")
	}
	body := map[string]string{"taskId": f.task, "configId": f.config, "url": f.webhook}
	var err error
	if body["since"], err = pointInTime(f.since, now); err != nil {
		return fmt.Errorf("--since: %w", err)
	}
	if f.until != "" {
		if body["until"], err = pointInTime(f.until, now); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
	}
	for k, v := range body {
		if v == "" {
			delete(body, k)
		}
	}
	b, _ := json.Marshal(body)
	var res struct {
		Queued            int        `json:"queued"`
		AlreadyQueued     int        `json:"alreadyQueued"`
		Configs           int        `json:"configs"`
		Truncated         bool       `json:"truncated"`
		Max               int        `json:"max"`
		NextSince         *time.Time `json:"nextSince"`
		UnavailableBefore *time.Time `json:"unavailableBefore"`
		TasksGone         int        `json:"tasksGone"`
	}
	var raw json.RawMessage
	if err := m.send(ctx, http.MethodPost, "/v1/deliveries/replay", bytes.NewReader(b), &raw); err != nil {
		return err
	}
	if m.json {
		_, err := fmt.Fprintln(m.out, strings.TrimSpace(string(raw)))
		return err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "queued %d notifications again over %d push configs", res.Queued, res.Configs)
	if res.AlreadyQueued > 0 {
		fmt.Fprintf(m.out, " (%d still queued, left as they were)", res.AlreadyQueued)
	}
	fmt.Fprintln(m.out)
	switch {
	case res.Truncated && res.NextSince != nil:
		fmt.Fprintf(m.out, "cut at the bound (%d, RELAY_REPLAY_MAX_NOTIFICATIONS): go on with --since %s\n", res.Max,
			res.NextSince.UTC().Format(time.RFC3339Nano))
	case res.Truncated:
		fmt.Fprintln(m.out, "cut: the URL lists more push configs than one replay reads; replay by task, or an earlier --until")
	}
	if res.UnavailableBefore != nil {
		fmt.Fprintf(m.out, "events before %s are no longer stored (retention): their notifications cannot be replayed\n",
			res.UnavailableBefore.Local().Format(time.DateTime))
	}
	if res.TasksGone > 0 {
		fmt.Fprintf(m.out, "%d tasks that sent to the URL have expired\n", res.TasksGone)
	}
	return nil
}

// pointInTime reads a time given as a duration ago (2h) or as RFC 3339,
// and writes it as RFC 3339 (UTC).
func pointInTime(s string, now time.Time) (string, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return "", errors.New("a duration ago must not be negative")
		}
		return now.Add(-d).UTC().Format(time.RFC3339Nano), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", errors.New("not a duration (2h) nor an RFC 3339 time (2026-01-02T15:04:05Z)")
	}
	return t.UTC().Format(time.RFC3339Nano), nil
}
