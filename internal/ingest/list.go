package ingest

import (
	"cmp"
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
)

// ListTasks returns one page of the caller's tasks, newest update first,
// filtered by context (the caller's context of that id: another client's
// tasks in a context of the same id are not even loaded), state and
// update time. A page scans a bounded number of tasks; a
// sparse filter may return a short page with a token to continue.
func (s *Service) ListTasks(ctx context.Context, p a2a.ListParams) (a2a.ListResult, error) {
	size := cmp.Or(p.PageSize, a2a.DefaultListPageSize)
	if size < 1 || size > a2a.MaxListPageSize {
		return a2a.ListResult{}, a2a.InvalidParams("pageSize must be between 1 and %d, got %d", a2a.MaxListPageSize, size)
	}
	cursor, err := decodePageToken(p.PageToken)
	if err != nil {
		return a2a.ListResult{}, err
	}
	res := a2a.ListResult{PageSize: size, Tasks: []a2a.Task{}}
	filtered := p.ContextID != "" || p.State != "" || !p.UpdatedAfter.IsZero()
	budget := 20*size + 500
	for len(res.Tasks) < size && budget > 0 {
		batch := min(2*size, budget)
		entries, err := s.store.ScanIndex(ctx, tenant.Owner(ctx), cursor, batch)
		if err != nil {
			return res, err
		}
		budget -= len(entries)
		if cursor, err = s.collect(ctx, entries, p, size, &res); err != nil {
			return res, err
		}
		if len(entries) < batch && len(res.Tasks) < size {
			cursor = nil // the index is exhausted
			break
		}
	}
	if cursor != nil {
		res.NextPageToken = encodePageToken(*cursor)
	}
	if !filtered {
		n, err := s.store.IndexSize(ctx, tenant.Owner(ctx))
		if err != nil {
			return res, err
		}
		res.TotalSize = int(n)
	} else if p.PageToken == "" && res.NextPageToken == "" {
		res.TotalSize = len(res.Tasks)
	}
	return res, nil
}

// collect appends the tasks of entries that pass the filter, up to size, and
// returns the cursor after the last entry it looked at.
func (s *Service) collect(ctx context.Context, entries []taskstore.IndexEntry, p a2a.ListParams, size int, res *a2a.ListResult) (*taskstore.IndexEntry, error) {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.TaskID
	}
	recs, err := s.store.LoadMany(ctx, tenant.Owner(ctx), ids)
	if err != nil {
		return nil, err
	}
	var last *taskstore.IndexEntry
	for i := range entries {
		last = &entries[i]
		rec, ok := recs[entries[i].TaskID]
		if !ok {
			continue
		}
		v, err := decodeRecord(rec)
		if err != nil {
			return nil, err
		}
		if !tenant.Sees(ctx, v.Owner) {
			// The caller's task expired and another client reused its id
			// (v0.1 ids are the client's): not the caller's any more.
			if err := s.store.Unindex(ctx, tenant.Owner(ctx), v.Task.ID); err != nil {
				return nil, err
			}
			continue
		}
		if matches(v.Task, p) {
			res.Tasks = append(res.Tasks, v.Task)
			if len(res.Tasks) == size {
				break
			}
		}
	}
	return last, nil
}

func matches(t a2a.Task, p a2a.ListParams) bool {
	if p.ContextID != "" && t.ContextID != p.ContextID {
		return false
	}
	if p.State != "" && t.Status.State != p.State {
		return false
	}
	if !p.UpdatedAfter.IsZero() {
		ts, err := time.Parse(time.RFC3339Nano, t.Status.Timestamp)
		if err != nil || !ts.After(p.UpdatedAfter) {
			return false
		}
	}
	return true
}

func encodePageToken(c taskstore.IndexEntry) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Score, 10) + ":" + c.TaskID))
}

func decodePageToken(tok string) (*taskstore.IndexEntry, error) {
	if tok == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		score, id, ok := strings.Cut(string(b), ":")
		if n, perr := strconv.ParseInt(score, 10, 64); ok && perr == nil && id != "" {
			return &taskstore.IndexEntry{Score: n, TaskID: id}, nil
		}
	}
	return nil, a2a.InvalidParams("pageToken %q is not a token relay issued", tok)
}
