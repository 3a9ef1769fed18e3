package taskstore

import (
	"encoding/json"
	"fmt"
)

// Event filters. A commit gives each event it delivers a class
// (Commit.Class), and a push config that filters events lists the classes
// it takes (its accept string: Commit.PushAccept, SetPushConfig): the
// commit makes a notification for a config only when the config takes the
// event's class, so an event a config filters out never becomes a
// delivery (no lane entry, record or outbox entry). What a class means is
// the caller's business (ingest classifies A2A events); the store only
// matches bytes. A config without an accept string takes every event.
//
// The accept strings of a task's configs are kept in its hash ('pf', a
// JSON object of config id -> accept string, only for configs that filter),
// read by the commit with the fields it reads anyway: a task whose configs
// do not filter pays nothing.

// ClassAny is the class of an event delivered without one: configs that
// filter never take it (unless their accept string lists it).
const ClassAny = '1'

// checkAccept refuses an accept string that is empty or holds anything but
// classes ('a'..'z', ClassAny).
func checkAccept(id, accept string) error {
	if accept == "" {
		return fmt.Errorf("taskstore: config %q: empty accept string (omit it to take every event)", id)
	}
	for i := 0; i < len(accept); i++ {
		if c := accept[i]; c != ClassAny && (c < 'a' || c > 'z') {
			return fmt.Errorf("taskstore: config %q: accept string %q holds %q, not a class", id, accept, c)
		}
	}
	return nil
}

// acceptArg is commit.lua's setAccept: the accept strings of the configs
// the commit stores ("" when none filters).
func acceptArg(c Commit) (string, error) {
	if len(c.PushAccept) == 0 {
		return "", nil
	}
	for id, a := range c.PushAccept {
		if _, ok := c.PushConfigs[id]; !ok {
			return "", fmt.Errorf("taskstore: accept string for config %q, which the commit does not store", id)
		}
		if err := checkAccept(id, a); err != nil {
			return "", err
		}
	}
	b, _ := json.Marshal(c.PushAccept) // (strings only: cannot fail)
	return string(b), nil
}

// deliverFlags is one flag per event of c: "0" when it is not delivered to
// the task's push configs, else its class (ClassAny when c gives none).
func deliverFlags(c Commit) (string, error) {
	flags := make([]byte, len(c.Events))
	for i := range flags {
		flags[i] = '0'
		if i < len(c.Deliver) && c.Deliver[i] {
			flags[i] = ClassAny
			if i < len(c.Class) && c.Class[i] != 0 {
				flags[i] = c.Class[i]
			}
			if f := flags[i]; f != ClassAny && (f < 'a' || f > 'z') {
				return "", fmt.Errorf("taskstore: event %d: class %q is not one", i, f)
			}
		}
	}
	return string(flags), nil
}
