package ingest

import (
	"encoding/json"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// skillDecoded is skillOf the decoding way, always.
func skillDecoded(md json.RawMessage) string {
	var v struct {
		Skill string `json:"skill"`
	}
	_ = json.Unmarshal(md, &v)
	return v.Skill
}

// skillOf gives what decoding the metadata gives, for metadata that names
// the skill in every way json.Unmarshal matches a key (any case, escapes,
// Unicode folding) and for metadata that does not.
func TestSkillIsReadWithoutDecodingMetadataThatCannotNameIt(t *testing.T) {
	t.Parallel()
	for _, md := range []string{
		``, `null`, `{}`, `{"demo":{"steps":4}}`, `{"skill":"fx"}`, `{"SKILL":"fx"}`, `{"sKiLl":"fx"}`,
		`{"\u0073kill":"fx"}`, `{"ſkill":"fx"}`, `{"s\u212aill":"fx"}`, `{"sKill":"a","skill":"b"}`,
		`{"skills":"no"}`, `{"x":"skill"}`, `{"a":{"skill":"nested"}}`, `{"skill":7}`, `{"skill":"fx"`,
		`["skill"]`, `{"é":1,"skill":"fx"}`, `{"ski":"l"}`, `{"s":1,"kill":2}`,
	} {
		m := a2a.Message{Metadata: json.RawMessage(md)}
		if got, want := skillOf(m), skillDecoded(m.Metadata); got != want {
			t.Errorf("skillOf(%s) = %q, decoding gives %q", md, got, want)
		}
	}
	for _, md := range []string{`{"demo":{"artifactChunks":0,"delayMs":20,"steps":4}}`, `{"emitNs":"1","seq":1}`} {
		if mayNameSkill([]byte(md)) {
			t.Errorf("%s is decoded for a skill it cannot name", md)
		}
	}
}
