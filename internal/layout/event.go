package layout

import (
	"strconv"
	"strings"
)

// The entries of a task's event stream (TaskKeys.Events), which the commit
// script writes (taskstore's commit.lua) and the task store, the outbox
// and lib.lua's eventOf read: field e is the event (its JSON as committed),
// v the task version its commit made, t the traceparent of its turn
// (absent when the commit had none), d the push configs the commit queued
// a notification of the event for, their ids joined by EventConfigSep
// (absent when it queued none, or listed them in the task's delivery index
// instead: TaskDeliveries). A previous relay's entries may also carry s,
// the task after the event (taskstore's taskat.lua reads it).
const (
	EventFieldEvent       = "e"
	EventFieldVersion     = "v"
	EventFieldTraceParent = "t"
	EventFieldConfigs     = "d"
	// EventConfigSep separates the config ids of field d: a newline, a
	// control character, which no config id holds (a2a.ValidateID; the
	// commit lists a notification of a config whose id holds one in the
	// task's delivery index instead).
	EventConfigSep = "\n"
)

// EventEntry is one entry of a task's event stream, decoded.
type EventEntry struct {
	Event       []byte
	Version     int64 // 0 when the entry has none
	TraceParent string
	// Configs are the push configs the commit queued a notification of
	// the event for, named here (field d): the notification of config c is
	// Keys.NotificationID(task, entry id, c). Nil when none is named.
	Configs []string
}

// DecodeEventEntry reads the fields of an event stream entry (as go-redis
// returns them). A field that is missing or not a string reads as empty.
func DecodeEventEntry(values map[string]any) EventEntry {
	ev, _ := values[EventFieldEvent].(string)
	v, _ := values[EventFieldVersion].(string)
	tp, _ := values[EventFieldTraceParent].(string)
	ver, _ := strconv.ParseInt(v, 10, 64)
	return EventEntry{Event: []byte(ev), Version: ver, TraceParent: tp, Configs: EventConfigs(values[EventFieldConfigs])}
}

// EventConfigs splits field d of an event stream entry (nil when it is
// missing, empty or not a string).
func EventConfigs(d any) []string {
	s, _ := d.(string)
	if s == "" {
		return nil
	}
	return strings.Split(s, EventConfigSep)
}
