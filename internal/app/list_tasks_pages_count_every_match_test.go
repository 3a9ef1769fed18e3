package app

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ListTasks' totalSize counts every match of the filter among the caller's
// tasks, on every page of a listing that spans several (it was 0 past one
// page), and the last page has no nextPageToken, even when it ends exactly
// at the last match (its token led to an empty page).
func TestListTasksPagesCountEveryMatch(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	// Six tasks in ctx-a (two of them failed), three in ctx-b.
	for i := range 9 {
		ctx, outcome := "ctx-a", "completed"
		if i >= 6 {
			ctx = "ctx-b"
		} else if i%3 == 0 {
			outcome = "failed"
		}
		r.call("SendMessage", map[string]any{"message": v10Message(fmt.Sprint("page", i), map[string]any{"contextId": ctx,
			"metadata": demo(map[string]any{"outcome": outcome, "steps": 0})})}, nil)
	}
	type page struct {
		Tasks         []v10Task `json:"tasks"`
		NextPageToken string    `json:"nextPageToken"`
		PageSize      int       `json:"pageSize"`
		TotalSize     int       `json:"totalSize"`
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		pages  []int // the number of tasks on each page
		total  int
	}{
		{"context, two full pages", map[string]any{"contextId": "ctx-a", "pageSize": 3}, []int{3, 3}, 6},
		{"context, a full page and a short one", map[string]any{"contextId": "ctx-a", "pageSize": 4}, []int{4, 2}, 6},
		{"context, one page exactly", map[string]any{"contextId": "ctx-a", "pageSize": 6}, []int{6}, 6},
		{"context, one short page", map[string]any{"contextId": "ctx-a"}, []int{6}, 6},
		{"context, pages of one", map[string]any{"contextId": "ctx-b", "pageSize": 1}, []int{1, 1, 1}, 3},
		{"context and state", map[string]any{"contextId": "ctx-a", "status": "TASK_STATE_FAILED", "pageSize": 1}, []int{1, 1}, 2},
		{"state", map[string]any{"status": "TASK_STATE_COMPLETED", "pageSize": 2}, []int{2, 2, 2, 1}, 7},
		{"no match", map[string]any{"contextId": "ctx-none", "pageSize": 2}, []int{0}, 0},
		{"unfiltered, three full pages", map[string]any{"pageSize": 3}, []int{3, 3, 3}, 9},
		{"unfiltered, one page exactly", map[string]any{"pageSize": 9}, []int{9}, 9},
	} {
		var got []int
		seen := map[string]bool{}
		token := ""
		for len(got) <= len(tc.pages) {
			params := map[string]any{"pageToken": token}
			for k, v := range tc.params {
				params[k] = v
			}
			var p page
			r.call("ListTasks", params, &p)
			got = append(got, len(p.Tasks))
			if p.TotalSize != tc.total {
				t.Errorf("%s: page %d: totalSize %d, want %d", tc.name, len(got), p.TotalSize, tc.total)
			}
			for _, task := range p.Tasks {
				if seen[task.ID] {
					t.Errorf("%s: page %d repeats task %s", tc.name, len(got), task.ID)
				}
				seen[task.ID] = true
			}
			if token = p.NextPageToken; token == "" {
				break
			}
		}
		if !slices.Equal(got, tc.pages) {
			t.Errorf("%s: pages of %v tasks, want %v", tc.name, got, tc.pages)
		}
	}
	// A token of the previous relay ("<score>:<task id>", without the
	// count) still pages, and the page it leads to counts every match.
	var first, second page
	r.call("ListTasks", map[string]any{"contextId": "ctx-a", "pageSize": 3}, &first)
	raw, err := base64.RawURLEncoding.DecodeString(first.NextPageToken)
	if err != nil || !strings.HasPrefix(string(raw), "t6:") {
		t.Fatalf("first page's token %q (%q, %v): want one carrying the count 6", first.NextPageToken, raw, err)
	}
	old := base64.RawURLEncoding.EncodeToString([]byte(strings.TrimPrefix(string(raw), "t6:")))
	r.call("ListTasks", map[string]any{"contextId": "ctx-a", "pageSize": 3, "pageToken": old}, &second)
	if len(second.Tasks) != 3 || second.TotalSize != 6 || second.NextPageToken != "" {
		t.Errorf("page after an earlier relay's token: %d tasks, totalSize %d, token %q; want 3, 6, none",
			len(second.Tasks), second.TotalSize, second.NextPageToken)
	}
}
