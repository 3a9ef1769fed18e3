package ingest

import (
	"github.com/a2arelay/relay/internal/a2a"
)

// Event filters of relay's webhook extension (a2a.WebhookOptions.Events,
// docs/webhook-extension.md). The commit classes each event it delivers,
// and each config that filters lists the classes it takes; taskstore's
// commit matches them, so that an event a config filters out never becomes
// a delivery.
const (
	// classFinal: a task, or a status update, in a final or interrupted
	// state (completed, failed, canceled, rejected, input-required,
	// auth-required).
	classFinal = 'f'
	// classChunk: an artifact update that appends to an artifact
	// (append: true, its last chunk included).
	classChunk = 'c'
	// classOther: every other event delivered (a task or status update in
	// another state, an artifact update that starts an artifact).
	classOther = 'o'
)

// eventClass is ev's class for the configs' event filters.
func eventClass(ev a2a.Event) byte {
	var st *a2a.TaskStatus
	switch ev.Kind {
	case a2a.EventArtifact:
		if ev.Append {
			return classChunk
		}
		return classOther
	case a2a.EventTask:
		if ev.Task != nil {
			st = &ev.Task.Status
		}
	case a2a.EventStatus:
		st = ev.Status
	}
	if st != nil && (st.State.Terminal() || st.State.Interrupted()) {
		return classFinal
	}
	return classOther
}

// classes is eventClass of each event.
func classes(events []a2a.Event) []byte {
	out := make([]byte, len(events))
	for i, ev := range events {
		out[i] = eventClass(ev)
	}
	return out
}

// acceptOf is the event classes a config with options o takes ("": every
// event, no filter).
func acceptOf(o *a2a.WebhookOptions) string {
	if o == nil {
		return ""
	}
	switch o.Events {
	case a2a.EventsFinal:
		return string(classFinal)
	case a2a.EventsNoArtifactChunks:
		return string([]byte{classFinal, classOther})
	}
	return ""
}

// pushAccept is the accept strings of the configs of push that filter
// (nil when none does).
func pushAccept(push []a2a.PushConfig) map[string]string {
	var out map[string]string
	for _, p := range push {
		if a := acceptOf(p.Options); a != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[p.ID] = a
		}
	}
	return out
}
