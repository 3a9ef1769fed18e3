package a2a

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// decodedV10 is the body a v1.0 webhook gets for a stored event the
// decoding way: the event decoded, and EncodeNotification (the task event
// carries its snapshot). ok false: the stored bytes do not decode.
func decodedV10(t *testing.T, stored []byte) (Notification, bool) {
	t.Helper()
	var ev Event
	if json.Unmarshal(stored, &ev) != nil {
		return Notification{}, false
	}
	var snap Task
	if ev.Task != nil {
		snap = *ev.Task
	}
	n, err := EncodeNotification(V10, ev, snap)
	if err != nil {
		t.Fatalf("encode the decoded event %s: %v", stored, err)
	}
	return n, true
}

// checkStoredV10 fails when the stored-bytes path gives a body for stored
// and the decoding way gives another body, or none.
func checkStoredV10(t *testing.T, stored []byte) bool {
	t.Helper()
	fast, ok := EncodeStoredV10(stored)
	if !ok {
		return false
	}
	slow, sok := decodedV10(t, stored)
	if !sok {
		t.Fatalf("stored bytes that do not decode gave a body:\nstored %s\nbody   %s", stored, fast.Body)
	}
	if !bytes.Equal(fast.Body, slow.Body) || fast.ContentType != slow.ContentType || fast.Version != slow.Version {
		t.Fatalf("bodies differ:\nstored  %s\nstored  %s %s %s\ndecoded %s %s %s", stored,
			fast.Body, fast.ContentType, fast.Version, slow.Body, slow.ContentType, slow.Version)
	}
	return true
}

// A v1.0 body rendered from the stored event's bytes is byte for byte the
// body of the decoded event, over random events of the three kinds read
// that way (each is read so: none goes the decoding way), and over the
// same events' bytes mutated (whitespace, nulls, escapes, cuts, unknown
// and repeated keys), which either give that same body or none.
func TestStoredV10BodyMatchesDecodedEvent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(15, 3))
	for i := range 4000 {
		ev := randomEvent(r)
		stored, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !checkStoredV10(t, stored) {
			t.Fatalf("event %d, as relay stores it, was not read from its bytes: %s", i, stored)
		}
		for range 8 {
			checkStoredV10(t, mutate(r, stored))
		}
	}
}

// The same property for the fuzzer: go test -fuzz FuzzStoredV10Body.
func FuzzStoredV10Body(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		b, _ := json.Marshal(randomEvent(r))
		f.Add(b)
	}
	f.Add([]byte(`{"kind":"status-update","taskId":"t","contextId":"c","metadata":null}`))
	f.Add([]byte(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working","message":{"messageId":"m","role":"agent","parts":null}}}`))
	f.Add([]byte(`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"data","data":{ "a" : [1, 2.5e3, "<&>"] }}]}}`))
	f.Fuzz(func(t *testing.T, stored []byte) { checkStoredV10(t, stored) })
}

var storedSamples = []string{
	"", "x", "working: step 1 of 4", "<b>&amp;</b>", "quote \" and \\ back", "line\nbreak\ttab\r",
	"\u2028\u2029", "héllo ✓", "\x00\x1f", "bad \xff utf8", "emoji 😀", "/slash/", "\u007f",
}

func randomString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return storedSamples[r.IntN(len(storedSamples))]
	}
	return "s" + strconv.Itoa(r.IntN(1000))
}

func randomRaw(r *rand.Rand) json.RawMessage {
	switch r.IntN(8) {
	case 0:
		return nil
	case 1:
		return json.RawMessage(`{}`)
	case 2:
		return json.RawMessage(`{"emitNs":"1795692317011716932","seq":1}`)
	case 3:
		return json.RawMessage(`{ "a" : [1, -2.5e+3, true, null, "x y"], "b":{"c":"<&>"} }`)
	case 4:
		s, _ := json.Marshal(randomString(r))
		return json.RawMessage(`{"k":` + string(s) + `,"n":0.5}`)
	case 5:
		return json.RawMessage(`[1,"\u2028",{"d":[]}]`)
	case 6:
		return json.RawMessage(`"\u003c tag"`)
	}
	return json.RawMessage(`{"demo":{"turn":"bench-1","step":2}}`)
}

func randomStrings(r *rand.Rand) []string {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+r.IntN(3))
	for i := range out {
		out[i] = randomString(r)
	}
	return out
}

func randomParts(r *rand.Rand) []Part {
	if r.IntN(6) == 0 {
		return nil
	}
	out := make([]Part, r.IntN(4))
	for i := range out {
		p := Part{Metadata: randomRaw(r)}
		switch r.IntN(5) {
		case 0:
			p.Kind, p.Text = PartText, randomString(r)
		case 1:
			p.Kind = PartFile
			if r.IntN(4) > 0 {
				p.File = &File{Name: randomString(r), MimeType: randomString(r), Bytes: randomString(r), URI: randomString(r)}
			}
		case 2:
			p.Kind, p.Data = PartData, randomRaw(r)
		case 3:
			p.Kind, p.Text, p.Data = PartKind(randomString(r)), randomString(r), randomRaw(r)
		default:
			p.Kind = PartText
		}
		out[i] = p
	}
	return out
}

func randomMessage(r *rand.Rand) *Message {
	if r.IntN(3) == 0 {
		return nil
	}
	roles := []Role{RoleAgent, RoleUser, "", "Agent-x"}
	return &Message{MessageID: randomString(r), Role: roles[r.IntN(len(roles))], Parts: randomParts(r),
		TaskID: randomString(r), ContextID: randomString(r), ReferenceTaskIDs: randomStrings(r),
		Extensions: randomStrings(r), Metadata: randomRaw(r)}
}

func randomStatus(r *rand.Rand) TaskStatus {
	states := []TaskState{StateWorking, StateCompleted, StateInputRequired, StateUnknown, "", "auth-required", "Odd-State"}
	st := TaskStatus{State: states[r.IntN(len(states))], Message: randomMessage(r)}
	if r.IntN(2) == 0 {
		st.Timestamp = "2026-11-26T11:25:17.012Z"
	}
	return st
}

func randomArtifact(r *rand.Rand) Artifact {
	return Artifact{ArtifactID: randomString(r), Name: randomString(r), Description: randomString(r),
		Parts: randomParts(r), Extensions: randomStrings(r), Metadata: randomRaw(r)}
}

func randomEvent(r *rand.Rand) Event {
	ev := Event{TaskID: randomString(r), ContextID: randomString(r), Metadata: randomRaw(r)}
	switch r.IntN(3) {
	case 0:
		ev.Kind = EventStatus
		if r.IntN(5) > 0 {
			st := randomStatus(r)
			ev.Status = &st
		}
		ev.Final = r.IntN(2) == 0
	case 1:
		ev.Kind = EventArtifact
		a := randomArtifact(r)
		ev.Artifact, ev.Append, ev.LastChunk = &a, r.IntN(2) == 0, r.IntN(2) == 0
	default:
		ev.Kind = EventTask
		t := Task{ID: randomString(r), ContextID: randomString(r), Status: randomStatus(r), Metadata: randomRaw(r)}
		for range r.IntN(3) {
			if m := randomMessage(r); m != nil {
				t.History = append(t.History, *m)
			}
		}
		for range r.IntN(3) {
			t.Artifacts = append(t.Artifacts, randomArtifact(r))
		}
		ev.Task = &t
	}
	return ev
}

// mutate returns stored with one random change.
func mutate(r *rand.Rand, stored []byte) []byte {
	s := string(stored)
	pos := r.IntN(len(s) + 1)
	edits := []func() string{
		func() string { return s[:pos] + " " + s[pos:] },
		func() string { return s[:pos] },
		func() string { return s[:pos] + s[min(pos+1, len(s)):] },
		func() string { return s[:pos] + "null" + s[pos:] },
		func() string { return strings.Replace(s, `"metadata":`, `"metadata":null,"x":`, 1) },
		func() string { return strings.Replace(s, `:{`, `:null,"y":{`, 1) },
		func() string { return strings.Replace(s, `"taskId":`, `"taskId":"a","taskId":`, 1) },
		func() string { return strings.Replace(s, `"taskId":`, `"TaskId":`, 1) },
		func() string { return strings.Replace(s, `"text":"`, `"text":"\u0041\/`, 1) },
		func() string { return strings.Replace(s, `"parts":[`, `"parts":null,"z":[`, 1) },
		func() string { return strings.Replace(s, `"final":true`, `"final":1`, 1) },
		func() string { return strings.Replace(s, `"state":"`, `"state":"\u0077`, 1) },
		func() string { return strings.Replace(s, `"messageId":"`, `"messageId":7,"q":"`, 1) },
		func() string { return strings.Replace(s, `"kind":"status-update"`, `"kind":"message","message":{}`, 1) },
		func() string { return strings.Replace(s, `"extensions":[`, `"extensions":[1,`, 1) },
		func() string { return s + " " },
		func() string { return s[:pos] + string(rune(r.IntN(128))) + s[pos:] },
	}
	return []byte(edits[r.IntN(len(edits))]())
}

// benchStored is a status update as the demo agent commits it.
var benchStored = []byte(`{"kind":"status-update","taskId":"b52fa114-95c5-440b-9260-0c70251d4d1c","contextId":"d80821aa-46a9-49b8-be64-4e146fca6fc9","status":{"state":"working","message":{"messageId":"b9383722-82b1-4f0b-9c1f-4ccb4b21aad0","role":"agent","parts":[{"kind":"text","text":"working: step 1 of 4"}],"taskId":"b52fa114-95c5-440b-9260-0c70251d4d1c","contextId":"d80821aa-46a9-49b8-be64-4e146fca6fc9","metadata":{"demo":{"turn":"bench-4062","step":1}}},"timestamp":"2026-11-26T11:25:17.012Z"},"metadata":{"emitNs":"1795692317011716932","seq":1}}`)

func BenchmarkV10BodyFromStoredBytes(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := EncodeStoredV10(benchStored); !ok {
			b.Fatal("not read")
		}
	}
}

func BenchmarkV10BodyDecoded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var ev Event
		if err := json.Unmarshal(benchStored, &ev); err != nil {
			b.Fatal(err)
		}
		if _, err := EncodeNotification(V10, ev, Task{}); err != nil {
			b.Fatal(err)
		}
	}
}
