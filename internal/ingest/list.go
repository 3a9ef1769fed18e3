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

// ListTasks returns one page of the caller's tasks, newest status change
// first (A2A sorts by status timestamp; a commit that changes no status,
// an artifact, leaves its task where it is), filtered by context (the
// caller's context of that id: another client's tasks in a context of the
// same id are not even loaded), state and status time.
//
// A page has a nextPageToken only when a match follows it: the scan looks
// one match past the page, so the last page has none. A page scans a
// bounded number of index entries; a sparse filter may therefore return a
// short page, even an empty one, with a token to continue, the one case in
// which a token may lead to no further task.
//
// totalSize counts every match of the filter among the caller's tasks.
// Unfiltered, that is the size of the caller's index. Filtered, the first
// page (no token) scans on past the page, up to Config.ListCountMax index entries
// in all, counting the matches; its tokens carry that count, so that later
// pages report the same total without scanning again (a task that starts
// matching meanwhile is counted by the next listing). For a caller with
// more tasks than that, the filtered totalSize counts the matches among
// the ListCountMax of its tasks whose status changed last only (a lower
// bound): each entry counted is a task loaded and decoded, and one small request must
// not make Redis and relay read a whole client's storage.
func (s *Service) ListTasks(ctx context.Context, p a2a.ListParams) (a2a.ListResult, error) {
	size := cmp.Or(p.PageSize, a2a.DefaultListPageSize)
	if size < 1 || size > a2a.MaxListPageSize {
		return a2a.ListResult{}, a2a.InvalidParams("pageSize must be between 1 and %d, got %d", a2a.MaxListPageSize, size)
	}
	tok, err := decodePageToken(p.PageToken)
	if err != nil {
		return a2a.ListResult{}, err
	}
	filtered := p.ContextID != "" || p.State != "" || !p.UpdatedAfter.IsZero()
	sc, err := s.scan(ctx, p, tok.cursor, size, filtered && tok.cursor == nil)
	if err != nil {
		return a2a.ListResult{}, err
	}
	res := a2a.ListResult{PageSize: size, Tasks: sc.tasks}
	total := -1
	switch {
	case !filtered:
		n, err := s.store.IndexSize(ctx, tenant.Owner(ctx))
		if err != nil {
			return res, err
		}
		res.TotalSize = int(n)
	case tok.total >= 0:
		total = tok.total
	case sc.counting:
		total = sc.matches
	default: // a token of an earlier relay, without the count
		all, err := s.scan(ctx, p, nil, size, true)
		if err != nil {
			return res, err
		}
		total = all.matches
	}
	if total >= 0 {
		res.TotalSize = total
	}
	if sc.next != nil {
		res.NextPageToken = pageToken{cursor: sc.next, total: total}.encode()
	}
	return res, nil
}

// countBatch is how many index entries a scan reads at once once the page
// is full and it only counts.
const countBatch = 256

// pageScan is a scan of the caller's index for one page.
type pageScan struct {
	size int
	// counting scans on to the end of the index, counting every match.
	counting bool
	tasks    []a2a.Task
	// matches counts the matches seen, those of the page among them.
	matches int
	// last is the index entry of the page's last task.
	last *taskstore.IndexEntry
	// more: a match follows the page.
	more bool
	// next is where the next page starts (nil: nothing follows).
	next *taskstore.IndexEntry
}

// scan reads the caller's index after cursor until it has a page of size
// matches and knows whether another follows, until the index ends, or,
// unless counting, until it has read its budget of entries.
func (s *Service) scan(ctx context.Context, p a2a.ListParams, cursor *taskstore.IndexEntry, size int, counting bool) (*pageScan, error) {
	sc := &pageScan{size: size, counting: counting, tasks: []a2a.Task{}}
	budget := 20*size + 500
	if counting {
		budget = s.cfg.ListCountMax
	}
	for {
		batch := 2 * size
		if counting && len(sc.tasks) == size {
			batch = countBatch
		}
		batch = min(batch, budget)
		entries, err := s.store.ScanIndex(ctx, tenant.Owner(ctx), cursor, batch)
		if err != nil {
			return nil, err
		}
		budget -= len(entries)
		if err := s.collect(ctx, entries, p, sc); err != nil {
			return nil, err
		}
		switch {
		case sc.more && !counting:
			sc.next = sc.last
			return sc, nil
		case len(entries) < batch: // the index ends here
			if sc.more {
				sc.next = sc.last
			}
			return sc, nil
		}
		cursor = &entries[len(entries)-1]
		if budget <= 0 {
			// Out of budget before the page's end or the index's: the
			// next page goes on after the last match of the page, or after
			// the last entry read (a counting scan's count stops there).
			sc.next = cursor
			if sc.more {
				sc.next = sc.last
			}
			return sc, nil
		}
	}
}

// collect takes the caller's tasks of entries that pass the filter into
// the page, and counts them; past a full page it notes that a match
// follows and, unless counting, stops.
func (s *Service) collect(ctx context.Context, entries []taskstore.IndexEntry, p a2a.ListParams, sc *pageScan) error {
	if len(entries) == 0 {
		return nil
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.TaskID
	}
	recs, err := s.store.LoadMany(ctx, tenant.Owner(ctx), ids)
	if err != nil {
		return err
	}
	for i := range entries {
		rec, ok := recs[entries[i].TaskID]
		if !ok {
			continue
		}
		v, err := decodeRecord(rec)
		if err != nil {
			return err
		}
		if !tenant.Sees(ctx, v.Owner) {
			// The caller's task expired and another client reused its id
			// (v0.1 ids are the client's): not the caller's any more.
			if err := s.store.Unindex(ctx, tenant.Owner(ctx), v.Task.ID); err != nil {
				return err
			}
			continue
		}
		if !matches(v.Task, p) {
			continue
		}
		sc.matches++
		if len(sc.tasks) < sc.size {
			sc.tasks = append(sc.tasks, v.Task)
			sc.last = &entries[i]
			continue
		}
		sc.more = true
		if !sc.counting {
			return nil
		}
	}
	return nil
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

// pageToken is where a page starts, and for a filtered listing the
// number of matches its first page counted (-1: none counted).
type pageToken struct {
	cursor *taskstore.IndexEntry
	total  int
}

// encode spells the token "<score>:<task id>", prefixed with "t<total>:"
// when it carries a count (task ids may hold colons; scores never start
// with a "t").
func (t pageToken) encode() string {
	s := strconv.FormatInt(t.cursor.Score, 10) + ":" + t.cursor.TaskID
	if t.total >= 0 {
		s = "t" + strconv.Itoa(t.total) + ":" + s
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func decodePageToken(tok string) (pageToken, error) {
	if tok == "" {
		return pageToken{total: -1}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		t, s := pageToken{total: -1}, string(b)
		if rest, ok := strings.CutPrefix(s, "t"); ok {
			n, after, _ := strings.Cut(rest, ":")
			if t.total, err = strconv.Atoi(n); err != nil || t.total < 0 {
				return pageToken{}, a2a.InvalidParams("pageToken %q is not a token relay issued", tok)
			}
			s = after
		}
		score, id, ok := strings.Cut(s, ":")
		if n, perr := strconv.ParseInt(score, 10, 64); ok && perr == nil && id != "" {
			t.cursor = &taskstore.IndexEntry{Score: n, TaskID: id}
			return t, nil
		}
	}
	return pageToken{}, a2a.InvalidParams("pageToken %q is not a token relay issued", tok)
}
