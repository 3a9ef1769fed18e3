package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/webhook"
)

// postTask is one task of a ceiling run (Config.Ceiling): it POSTs the
// task's Steps+2 notifications straight to the sink at hook, one after the
// other, shaped as relay delivers them to a v1.0 push config (the task,
// Steps working updates, completed), with the same headers except the JWT,
// which relay signs and the ceiling does not. Each status update carries
// its send time as metadata.emitNs, so the sink measures latency as it does
// relay's.
func postTask(ctx context.Context, client *http.Client, cfg Config, hook string, token []byte, i int64) error {
	taskID, contextID := uuid.NewString(), uuid.NewString()
	for k := range cfg.Steps + 2 {
		// A body of its own per POST: the transport may not be done
		// with the last one when its answer arrives.
		body := notificationBody(nil, cfg, i, taskID, contextID, k, time.Now())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(body))
		if err != nil {
			return err
		}
		h := req.Header
		h.Set("Content-Type", "application/a2a+json")
		h.Set("User-Agent", "relay-bench-ceiling")
		h.Set(webhook.HeaderVersion, "1.0")
		h.Set(webhook.HeaderID, uuid.NewString())
		h.Set(webhook.HeaderToken, string(token))
		h.Set(webhook.HeaderTokenV1, string(token))
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("bench: ceiling task %d: %w", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body) // so the connection is kept alive
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 300 {
			return fmt.Errorf("bench: ceiling task %d: the sink answered %s", i, resp.Status)
		}
	}
	return nil
}

// notificationBody appends to b notification k (0 to cfg.Steps+1) of task
// i as relay renders it in v1.0: first the task (submitted, with the
// user's message in its history, and no emitNs, like relay's), then the
// working status updates, each with a message, then completed.
func notificationBody(b []byte, cfg Config, i int64, taskID, contextID string, k int, now time.Time) []byte {
	ts := now.UTC().Format(time.RFC3339Nano)
	if k == 0 {
		return fmt.Appendf(b, `{"task":{"id":%q,"contextId":%q,"status":{"state":"TASK_STATE_SUBMITTED","timestamp":%q},`+
			`"history":[{"messageId":"bench-%d","contextId":%q,"taskId":%q,"role":"ROLE_USER","parts":[{"text":"load"}],`+
			`"metadata":{"demo":{"steps":%d,"delayMs":%d,"artifactChunks":0}}}]}}`,
			taskID, contextID, ts, i, contextID, taskID, cfg.Steps, cfg.Delay.Milliseconds())
	}
	b = fmt.Appendf(b, `{"statusUpdate":{"taskId":%q,"contextId":%q,"status":{`, taskID, contextID)
	if k <= cfg.Steps {
		b = fmt.Appendf(b, `"state":"TASK_STATE_WORKING","message":{"messageId":%q,"contextId":%q,"taskId":%q,`+
			`"role":"ROLE_AGENT","parts":[{"text":"working: step %d of %d"}]},`, uuid.NewString(), contextID, taskID, k, cfg.Steps)
	} else {
		b = append(b, `"state":"TASK_STATE_COMPLETED",`...)
	}
	return fmt.Appendf(b, `"timestamp":%q},"metadata":{"emitNs":"%s","seq":%d}}}`, ts, strconv.FormatInt(now.UnixNano(), 10), k)
}
