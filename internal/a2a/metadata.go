package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// metadataOK reports whether a metadata value is absent, null or a JSON
// object: A2A metadata is a map of string keys.
func metadataOK(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || raw[0] == '{' || string(raw) == "null"
}

// CheckMetadata refuses an event whose metadata is not a JSON object
// wherever it carries one: on the event, its status message, its artifact,
// its message, its task (and the task's messages and artifacts), and any of
// their parts. The *FieldError names the field in the canonical model
// ("artifact.parts[0].metadata"). For what agents post (the worker API);
// a client's send is checked as it is decoded.
func (ev Event) CheckMetadata() error {
	if err := fieldMetadata("metadata", ev.Metadata); err != nil {
		return err
	}
	if ev.Status != nil {
		if err := messageMetadata("status.message", ev.Status.Message); err != nil {
			return err
		}
	}
	if ev.Artifact != nil {
		if err := artifactMetadata("artifact", *ev.Artifact); err != nil {
			return err
		}
	}
	if err := messageMetadata("message", ev.Message); err != nil {
		return err
	}
	if t := ev.Task; t != nil {
		if err := fieldMetadata("task.metadata", t.Metadata); err != nil {
			return err
		}
		if err := messageMetadata("task.status.message", t.Status.Message); err != nil {
			return err
		}
		for i := range t.History {
			if err := messageMetadata(fmt.Sprintf("task.history[%d]", i), &t.History[i]); err != nil {
				return err
			}
		}
		for i, a := range t.Artifacts {
			if err := artifactMetadata(fmt.Sprintf("task.artifacts[%d]", i), a); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldMetadata(field string, raw json.RawMessage) error {
	if metadataOK(raw) {
		return nil
	}
	return &FieldError{Field: field, Problem: "must be a JSON object"}
}

func messageMetadata(field string, m *Message) error {
	if m == nil {
		return nil
	}
	if err := fieldMetadata(field+".metadata", m.Metadata); err != nil {
		return err
	}
	return partsMetadata(field, m.Parts)
}

func artifactMetadata(field string, a Artifact) error {
	if err := fieldMetadata(field+".metadata", a.Metadata); err != nil {
		return err
	}
	return partsMetadata(field, a.Parts)
}

func partsMetadata(field string, parts []Part) error {
	for i, p := range parts {
		if err := fieldMetadata(fmt.Sprintf("%s.parts[%d].metadata", field, i), p.Metadata); err != nil {
			return err
		}
	}
	return nil
}
