package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// streamTask sends task i as SendStreamingMessage and reads its SSE stream
// to the end, recording every event in s (ids are the SSE ids).
func streamTask(ctx context.Context, client *http.Client, cfg Config, s *sink, i int64) error {
	resp, err := call(ctx, client, cfg, "SendStreamingMessage", i, map[string]any{})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	id := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strconv.FormatInt(i, 10) + "/" + strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			if bytes.Contains(data, []byte(`"error"`)) {
				return fmt.Errorf("bench: stream of task %d failed: %s", i, data)
			}
			var ev struct {
				Result struct {
					StatusUpdate *struct {
						Metadata struct{ EmitNs string } `json:"metadata"`
					} `json:"statusUpdate"`
				} `json:"result"`
			}
			_ = json.Unmarshal(data, &ev)
			var emit string
			if su := ev.Result.StatusUpdate; su != nil {
				emit = su.Metadata.EmitNs
			}
			s.record(id, emit, time.Now())
		}
	}
	return sc.Err()
}
