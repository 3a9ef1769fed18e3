package layout

import "strconv"

// The entries of a task's event stream (TaskKeys.Events), which the commit
// script writes (taskstore's commit.lua) and the task store, the outbox
// and lib.lua's eventOf read: field e is the event (its JSON as committed),
// v the task version its commit made, t the traceparent of its turn
// (absent when the commit had none). A previous relay's entries may also
// carry s, the task after the event (taskstore's taskat.lua reads it).
const (
	EventFieldEvent       = "e"
	EventFieldVersion     = "v"
	EventFieldTraceParent = "t"
)

// EventEntry is one entry of a task's event stream, decoded.
type EventEntry struct {
	Event       []byte
	Version     int64 // 0 when the entry has none
	TraceParent string
}

// DecodeEventEntry reads the fields of an event stream entry (as go-redis
// returns them). A field that is missing or not a string reads as empty.
func DecodeEventEntry(values map[string]any) EventEntry {
	ev, _ := values[EventFieldEvent].(string)
	v, _ := values[EventFieldVersion].(string)
	tp, _ := values[EventFieldTraceParent].(string)
	ver, _ := strconv.ParseInt(v, 10, 64)
	return EventEntry{Event: []byte(ev), Version: ver, TraceParent: tp}
}
