package ingest

import (
	"github.com/a2arelay/relay/internal/a2a"
)

// Event filters of relay's webhook extension (a2a.WebhookOptions.Events,
// docs/webhook-extension.md): an event a config filters out never becomes
// a delivery.
// The event classes are a2a's (a2a.Event.FilterClass): the commit classes
// each event it delivers, and each config that filters lists the classes
// it takes (a2a.WebhookOptions.Accept); taskstore's commit matches them.
const (
	classFinal = a2a.EventClassFinal
	classChunk = a2a.EventClassChunk
	classOther = a2a.EventClassOther
)

// eventClass is ev's class for the configs' event filters.
func eventClass(ev a2a.Event) byte { return ev.FilterClass() }

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
func acceptOf(o *a2a.WebhookOptions) string { return o.Accept() }

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
