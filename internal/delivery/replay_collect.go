package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/outbox"
)

// replayPage is how many events a replay reads of a task per round trip:
// each is held whole until its page is read (events may be megabytes).
const replayPage = 32

// eventHead decodes of a stored event what a replay needs (its kind, and
// what its filter class is made of), without the parts, history and
// artifacts that make events large.
func eventHead(b []byte) (a2a.Event, error) {
	var h struct {
		Kind   a2a.EventKind `json:"kind"`
		Append bool          `json:"append"`
		Status *struct {
			State a2a.TaskState `json:"state"`
		} `json:"status"`
		Task *struct {
			Status struct {
				State a2a.TaskState `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return a2a.Event{}, err
	}
	e := a2a.Event{Kind: h.Kind, Append: h.Append}
	if h.Status != nil {
		e.Status = &a2a.TaskStatus{State: h.Status.State}
	}
	if h.Task != nil {
		e.Task = &a2a.Task{Status: a2a.TaskStatus{State: h.Task.Status.State}}
	}
	return e, nil
}

// available counts targets' configs, and keeps the targets whose task
// still has its event stream; it tells in res which part of q's window
// retention cut, and how many tasks expired.
func (r *Replayer) available(ctx context.Context, targets []target, q ReplayRequest, res *ReplayResult) ([]target, error) {
	var live []target
	for _, t := range targets {
		res.Configs += len(t.configs)
		cut, err := r.events.EventsCutBefore(ctx, t.taskID)
		if errors.Is(err, outbox.ErrNotFound) {
			res.TasksGone++
			continue
		}
		if err != nil {
			return nil, err
		}
		if cut.After(q.Since) && cut.After(res.UnavailableBefore) {
			res.UnavailableBefore = cut
		}
		live = append(live, t)
	}
	return live, nil
}

// taskEvents reads one target's events of a window, a page at a time,
// keeping of each only its id and whether it notifies.
type taskEvents struct {
	t          *target
	start, end string
	buf        []storedKind
	done       bool
}

type storedKind struct {
	id       string
	notifies bool
	class    byte // a2a.Event.FilterClass, for the configs' event filters
}

// head returns the target's next event of the window (false: none is left).
func (r *Replayer) head(ctx context.Context, s *taskEvents) (storedKind, bool, error) {
	if len(s.buf) == 0 && !s.done {
		evs, err := r.events.TaskEvents(ctx, s.t.taskID, s.start, s.end, replayPage)
		if err != nil {
			return storedKind{}, false, err
		}
		for _, ev := range evs {
			e, err := eventHead(ev.Event)
			s.buf = append(s.buf, storedKind{id: ev.ID, notifies: err == nil && e.Kind.Notifies(), class: e.FilterClass()})
		}
		if len(evs) < replayPage {
			s.done = true
		} else {
			s.start = "(" + evs[len(evs)-1].ID
		}
	}
	if len(s.buf) == 0 {
		return storedKind{}, false, nil
	}
	return s.buf[0], true, nil
}

// collect lists, per task, the notifications of q's window to targets'
// configs, oldest first, merging the tasks' events by commit time, up to
// the bound: when the bound cuts it, next is the commit time of the first
// event left out (each (task, config) pair then has its oldest queued, and
// a replay from next goes on where this one stopped).
func (r *Replayer) collect(ctx context.Context, targets []target, q ReplayRequest) (map[string][]outbox.Requeued, time.Time, error) {
	// (A time before 1970 is no stream id: the window starts, or ends, at 0.)
	start, end := strconv.FormatInt(max(0, q.Since.UnixMilli()), 10), strconv.FormatInt(max(0, q.Until.UnixMilli()), 10)
	streams := make([]*taskEvents, len(targets))
	for i := range targets {
		streams[i] = &taskEvents{t: &targets[i], start: start, end: end}
	}
	notes := map[string][]outbox.Requeued{}
	total := 0
	for {
		var best *taskEvents
		var ev storedKind
		for _, s := range streams {
			h, ok, err := r.head(ctx, s)
			if err != nil {
				return nil, time.Time{}, err
			}
			if ok && (best == nil || layout.IDBefore(h.id, ev.id)) {
				best, ev = s, h
			}
		}
		if best == nil {
			return notes, time.Time{}, nil
		}
		add := notesOf(best.t, ev)
		if total+len(add) > r.max && total > 0 { // (an event with more configs than the bound goes alone)
			return notes, time.UnixMilli(streamMs(ev.id)), nil
		}
		best.buf = best.buf[1:]
		notes[best.t.taskID] = append(notes[best.t.taskID], add...)
		total += len(add)
	}
}

// notesOf lists event ev's notifications to t's configs (those given their
// URL by the event's commit).
func notesOf(t *target, ev storedKind) []outbox.Requeued {
	if !ev.notifies {
		return nil
	}
	ms := streamMs(ev.id)
	var add []outbox.Requeued
	for _, c := range t.configs {
		if since, ok := t.since[c]; ok && ms < since.Add(-sinceSlack).UnixMilli() {
			continue // the config did not send to its URL yet
		}
		if !a2a.Takes(t.accept[c], ev.class) {
			continue // the config's event filter leaves it out: it never was a notification
		}
		add = append(add, outbox.Requeued{EventID: ev.id, ConfigID: c})
	}
	return add
}

// streamMs is the ms part of a stream id.
func streamMs(id string) int64 {
	ms, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return n
}
