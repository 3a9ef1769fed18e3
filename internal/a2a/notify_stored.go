package a2a

import (
	"bytes"
	"encoding/json"
	"strings"
)

// EncodeStoredV10 renders the v1.0 notification of a stored event (the
// JSON of an Event, as relay stores it) straight from its bytes: the same
// body EncodeNotification(V10, ev, snapshot) gives for the decoded event
// (snapshot: the event's task), without decoding the event into an Event
// and encoding the result with reflection. Strings and raw values in the
// form json.Marshal writes them (the stored form) are copied as they are;
// any other is re-encoded as json.Marshal would.
//
// It reads the task, status-update and artifact-update events in the form
// relay stores them. Anything else (another kind, a field it does not
// know, a null where a value is needed, a duplicate key, whitespace,
// malformed JSON) gives ok false: the caller then decodes the event and
// uses EncodeNotification, which also reports the malformed.
func EncodeStoredV10(stored []byte) (n Notification, ok bool) {
	var ev storedEvent
	s := storedScanner{b: stored}
	if !s.event(&ev) || s.i != len(stored) {
		return n, false
	}
	e := storedEmitter{out: make([]byte, 0, len(stored)+64)}
	switch {
	case spanIs(ev.kind, string(EventStatus)):
		if ev.task != nil || ev.artifact != nil {
			return n, false
		}
		e.lit(`{"statusUpdate":{"taskId":`)
		e.str(ev.taskID)
		e.lit(`,"contextId":`)
		e.str(ev.contextID)
		e.lit(`,"status":`)
		if ev.status == nil {
			e.lit(`{"state":"TASK_STATE_UNSPECIFIED"}`)
		} else if !e.status(ev.status) {
			return n, false
		}
		e.field("metadata", ev.metadata, true)
		e.lit(`}}`)
	case spanIs(ev.kind, string(EventArtifact)):
		if ev.task != nil || ev.status != nil || ev.artifact == nil {
			return n, false
		}
		e.lit(`{"artifactUpdate":{"taskId":`)
		e.str(ev.taskID)
		e.lit(`,"contextId":`)
		e.str(ev.contextID)
		e.lit(`,"artifact":`)
		if !e.artifact(ev.artifact) {
			return n, false
		}
		if ev.append {
			e.lit(`,"append":true`)
		}
		if ev.lastChunk {
			e.lit(`,"lastChunk":true`)
		}
		e.field("metadata", ev.metadata, true)
		e.lit(`}}`)
	case spanIs(ev.kind, string(EventTask)):
		if ev.task == nil || ev.status != nil || ev.artifact != nil {
			return n, false
		}
		e.lit(`{"task":`)
		if !e.task(ev.task) {
			return n, false
		}
		e.lit(`}`)
	default:
		return n, false
	}
	if e.bad {
		return n, false
	}
	return Notification{Body: e.out, ContentType: "application/a2a+json", Version: string(V10)}, true
}

// A span is the bytes of one JSON value inside a stored record: a string
// with its quotes, a raw value, an array or an object; nil when absent.
type span []byte

// storedEvent holds the fields of a stored Event a v1.0 body needs.
type storedEvent struct {
	kind                   span
	taskID, contextID      span
	task, status, artifact span
	metadata               span
	append, lastChunk      bool
}

// storedScanner reads stored JSON. Every method leaves i after what it
// read and returns false when the bytes are not in the form it reads.
//
// A trusted scanner reads bytes an untrusted one checked already: it
// still reads the keys of the object it is given, but passes over their
// values that are objects, arrays or raw values without checking them
// again (the emitter reads each level of a stored event once more, and
// would otherwise check the levels below it each time).
type storedScanner struct {
	b       []byte
	i       int
	trusted bool
}

func (s *storedScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *storedScanner) eat(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// object reads an object, calling field for each key (quotes removed; a
// key with escapes is refused) with the scanner before its value. field
// returns false for an unknown key or a value of the wrong type. A key
// seen twice is refused: seen holds one bit per key index field reports.
func (s *storedScanner) object(field func(key []byte) (idx int, ok bool)) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	var seen uint32
	for {
		if !s.eat('"') {
			return false
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' && s.b[s.i] != '\\' && s.b[s.i] >= 0x20 {
			s.i++
		}
		key := s.b[start:s.i]
		if !s.eat('"') || !s.eat(':') {
			return false
		}
		idx, ok := field(key)
		if !ok || seen&(1<<idx) != 0 {
			return false
		}
		seen |= 1 << idx
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// str reads a string and returns it with its quotes.
func (s *storedScanner) str() (span, bool) {
	start := s.i
	if !s.eat('"') {
		return nil, false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case byteClass[c]&inString == 0:
			s.i++ // the common case first
		case c == '"':
			s.i++
			return span(s.b[start:s.i]), true
		case c < 0x20:
			return nil, false
		case c == '\\':
			s.i++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if !isHex(s.peek()) {
						return nil, false
					}
					s.i++
				}
			default:
				return nil, false
			}
		default:
			s.i++
		}
	}
	return nil, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// spanIs reports whether the string span v holds lit, as json.Unmarshal
// decodes it.
func spanIs(v span, lit string) bool {
	if v == nil {
		return lit == ""
	}
	if plainString(v) {
		return string(v[1:len(v)-1]) == lit
	}
	return spanString(v) == lit
}

// spanString returns what the checked string span v holds, as
// json.Unmarshal decodes it ("" for nil).
func spanString(v span) string {
	var w string
	if v != nil {
		_ = json.Unmarshal(v, &w)
	}
	return w
}

// boolean reads true or false.
func (s *storedScanner) boolean() (v, ok bool) {
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		return true, true
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		return false, true
	}
	return false, false
}

// maxStoredDepth bounds the nesting of a raw value read here; deeper ones
// go the decoding way.
const maxStoredDepth = 64

// raw reads any JSON value (whitespace allowed inside it) and returns it.
func (s *storedScanner) raw() (span, bool) {
	start := s.i
	if s.trusted {
		return span(s.b[start:s.skip()]), true
	}
	if !s.value(0) {
		return nil, false
	}
	return span(s.b[start:s.i]), true
}

func (s *storedScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *storedScanner) value(depth int) bool {
	if depth > maxStoredDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		s.ws()
		if s.eat(end) {
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.str(); !ok {
					return false
				}
				s.ws()
				if !s.eat(':') {
					return false
				}
				s.ws()
			}
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(end) {
				return true
			}
			if !s.eat(',') {
				return false
			}
			s.ws()
		}
	case c == 't' || c == 'f':
		_, ok := s.boolean()
		return ok
	case c == 'n':
		if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
			s.i += 4
			return true
		}
		return false
	default:
		return s.number()
	}
}

// skip passes over a checked value and returns where it ends.
func (s *storedScanner) skip() int {
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return s.i
			}
			depth--
			s.i++
		case ',':
			if depth == 0 {
				return s.i
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && s.i <= len(s.b) && (s.i == len(s.b) || s.b[s.i] == ',' || s.b[s.i] == '}' || s.b[s.i] == ']') {
			return s.i
		}
	}
	return s.i
}

// number reads a JSON number.
func (s *storedScanner) number() bool {
	s.eat('-')
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.eat('.') && !s.digits() {
		return false
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *storedScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// shape names a stored object or array element type.
type shape uint8

const (
	shapeTask shape = iota
	shapeStatus
	shapeArtifact
	shapeMessage
	shapePart
	shapeString
)

// read reads one value of shape sh, checking its form.
func (s *storedScanner) read(sh shape) bool {
	if s.trusted && sh != shapeString {
		s.skip()
		return true
	}
	// Each shape is read by a function of its own, not inlined here: read
	// recurses (a task holds messages, which hold parts), and a frame that
	// held every shape's value at once would grow a fresh goroutine's
	// stack (a delivery lane's) several times over for one event.
	switch sh {
	case shapeTask:
		return s.readTask()
	case shapeStatus:
		return s.readStatus()
	case shapeArtifact:
		return s.readArtifact()
	case shapeMessage:
		return s.readMessage()
	case shapePart:
		return s.readPart()
	}
	_, ok := s.str()
	return ok
}

//go:noinline
func (s *storedScanner) readTask() bool {
	var t storedTask
	return s.taskInto(&t)
}

//go:noinline
func (s *storedScanner) readStatus() bool {
	var st storedStatus
	return s.statusInto(&st)
}

//go:noinline
func (s *storedScanner) readArtifact() bool {
	var a storedArtifact
	return s.artifactInto(&a)
}

//go:noinline
func (s *storedScanner) readMessage() bool {
	var m storedMessage
	return s.messageInto(&m)
}

//go:noinline
func (s *storedScanner) readPart() bool {
	var p storedPart
	return s.partInto(&p)
}

// sub reads a value of shape sh and returns it.
func (s *storedScanner) sub(sh shape) (span, bool) {
	start := s.i
	if !s.read(sh) {
		return nil, false
	}
	return span(s.b[start:s.i]), true
}

// array reads an array of sh (null: none) and returns it.
func (s *storedScanner) array(sh shape) (span, bool) {
	start := s.i
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return span(s.b[start:s.i]), true
	}
	if !s.eat('[') {
		return nil, false
	}
	if s.eat(']') {
		return span(s.b[start:s.i]), true
	}
	for {
		if !s.read(sh) {
			return nil, false
		}
		if s.eat(']') {
			return span(s.b[start:s.i]), true
		}
		if !s.eat(',') {
			return nil, false
		}
	}
}

// event reads a stored Event.
func (s *storedScanner) event(ev *storedEvent) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "kind":
			ev.kind, ok = s.str()
			return 0, ok
		case "taskId":
			ev.taskID, ok = s.str()
			return 1, ok
		case "contextId":
			ev.contextID, ok = s.str()
			return 2, ok
		case "task":
			ev.task, ok = s.sub(shapeTask)
			return 3, ok
		case "status":
			ev.status, ok = s.sub(shapeStatus)
			return 4, ok
		case "final":
			_, ok = s.boolean()
			return 5, ok
		case "artifact":
			ev.artifact, ok = s.sub(shapeArtifact)
			return 6, ok
		case "append":
			ev.append, ok = s.boolean()
			return 7, ok
		case "lastChunk":
			ev.lastChunk, ok = s.boolean()
			return 8, ok
		case "metadata":
			ev.metadata, ok = s.raw()
			return 9, ok
		}
		return 0, false // a message event, or a field this does not read
	})
}

type storedTask struct {
	id, contextID, status, history, artifacts, metadata span
}

func (s *storedScanner) taskInto(t *storedTask) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "id":
			t.id, ok = s.str()
			return 0, ok
		case "contextId":
			t.contextID, ok = s.str()
			return 1, ok
		case "status":
			t.status, ok = s.sub(shapeStatus)
			return 2, ok
		case "history":
			t.history, ok = s.array(shapeMessage)
			return 3, ok
		case "artifacts":
			t.artifacts, ok = s.array(shapeArtifact)
			return 4, ok
		case "metadata":
			t.metadata, ok = s.raw()
			return 5, ok
		}
		return 0, false
	})
}

type storedStatus struct {
	state     span
	message   span
	timestamp span
}

func (s *storedScanner) statusInto(st *storedStatus) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "state":
			st.state, ok = s.str()
			return 0, ok
		case "message":
			st.message, ok = s.sub(shapeMessage)
			return 1, ok
		case "timestamp":
			st.timestamp, ok = s.str()
			return 2, ok
		}
		return 0, false
	})
}

type storedArtifact struct {
	artifactID, name, description, parts, extensions, metadata span
}

func (s *storedScanner) artifactInto(a *storedArtifact) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "artifactId":
			a.artifactID, ok = s.str()
			return 0, ok
		case "name":
			a.name, ok = s.str()
			return 1, ok
		case "description":
			a.description, ok = s.str()
			return 2, ok
		case "parts":
			a.parts, ok = s.array(shapePart)
			return 3, ok
		case "extensions":
			a.extensions, ok = s.array(shapeString)
			return 4, ok
		case "metadata":
			a.metadata, ok = s.raw()
			return 5, ok
		}
		return 0, false
	})
}

type storedMessage struct {
	messageID, parts, taskID, contextID, refs, extensions, metadata span
	role                                                            span
}

func (s *storedScanner) messageInto(m *storedMessage) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "messageId":
			m.messageID, ok = s.str()
			return 0, ok
		case "role":
			m.role, ok = s.str()
			return 1, ok
		case "parts":
			m.parts, ok = s.array(shapePart)
			return 2, ok
		case "taskId":
			m.taskID, ok = s.str()
			return 3, ok
		case "contextId":
			m.contextID, ok = s.str()
			return 4, ok
		case "referenceTaskIds":
			m.refs, ok = s.array(shapeString)
			return 5, ok
		case "extensions":
			m.extensions, ok = s.array(shapeString)
			return 6, ok
		case "metadata":
			m.metadata, ok = s.raw()
			return 7, ok
		}
		return 0, false
	})
}

type storedPart struct {
	kind, text, data, metadata       span
	name, mimeType, bytes, uri, file span
}

func (s *storedScanner) partInto(p *storedPart) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "kind":
			p.kind, ok = s.str()
			return 0, ok
		case "text":
			p.text, ok = s.str()
			return 1, ok
		case "file":
			start := s.i
			ok = s.fileInto(p)
			p.file = span(s.b[start:s.i])
			return 2, ok
		case "data":
			p.data, ok = s.raw()
			return 3, ok
		case "metadata":
			p.metadata, ok = s.raw()
			return 4, ok
		}
		return 0, false
	})
}

// fileInto reads a stored File into p.
func (s *storedScanner) fileInto(p *storedPart) bool {
	return s.object(func(key []byte) (int, bool) {
		var ok bool
		switch string(key) {
		case "name":
			p.name, ok = s.str()
			return 0, ok
		case "mimeType":
			p.mimeType, ok = s.str()
			return 1, ok
		case "bytes":
			p.bytes, ok = s.str()
			return 2, ok
		case "uri":
			p.uri, ok = s.str()
			return 3, ok
		}
		return 0, false
	})
}

// storedEmitter writes v1.0 JSON from checked stored spans. bad is set
// when a span it reads again does not read (it was checked: never).
type storedEmitter struct {
	out []byte
	bad bool
}

func (e *storedEmitter) lit(s string) { e.out = append(e.out, s...) }

// str writes a string span as json.Marshal writes the string it holds.
func (e *storedEmitter) str(v span) {
	if v == nil {
		e.lit(`""`)
		return
	}
	if plainString(v) {
		e.out = append(e.out, v...)
		return
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		e.bad = true
		return
	}
	b, err := json.Marshal(s)
	if err != nil {
		e.bad = true
		return
	}
	e.out = append(e.out, b...)
}

// plainString: a string span that json.Marshal would write as it is:
// printable ASCII, no escapes, none of the characters it escapes for HTML.
func plainString(v span) bool {
	for _, c := range v[1 : len(v)-1] {
		if byteClass[c]&notPlain != 0 {
			return false
		}
	}
	return true
}

// byteClass holds, for each byte, the classes below.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		if c < 0x20 || c == '"' || c == '\\' {
			t[c] |= inString
		}
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>' || c == '&' {
			t[c] |= notPlain
		}
	}
	return t
}()

const (
	inString = 1 << iota // ends a string, or is not allowed in one as it is
	notPlain             // json.Marshal would write it otherwise
)

// field writes ,"name":value for a raw value present; omitempty: absent
// ones are left out.
func (e *storedEmitter) field(name string, v span, raw bool) {
	if v == nil {
		return
	}
	e.out = append(e.out, ',', '"')
	e.out = append(e.out, name...)
	e.out = append(e.out, '"', ':')
	if raw {
		e.raw(v)
	} else {
		e.str(v)
	}
}

// strField writes ,"name":"value" for a non-empty string, as omitempty does.
func (e *storedEmitter) strField(name string, v span) {
	if len(v) > 2 {
		e.field(name, v, false)
	}
}

// raw writes a raw value as json.Marshal writes a json.RawMessage: compact,
// with <, >, & and U+2028, U+2029 escaped.
func (e *storedEmitter) raw(v span) {
	if compactRaw(v) {
		e.out = append(e.out, v...)
		return
	}
	b, err := json.Marshal(json.RawMessage(v))
	if err != nil {
		e.bad = true
		return
	}
	e.out = append(e.out, b...)
}

// compactRaw: a raw value json.Marshal writes as it is: no whitespace
// outside strings, none of the characters it escapes.
func compactRaw(v span) bool {
	in := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			in = !in
		case '\\':
			i++
		case ' ', '\t', '\n', '\r':
			if !in {
				return false
			}
		case '<', '>', '&', 0xe2:
			return false
		}
	}
	return true
}

// strings writes a []string field, left out when empty (omitempty).
func (e *storedEmitter) strings(name string, v span) {
	if len(v) <= 2 || v[0] != '[' { // absent, [], null
		return
	}
	e.out = append(e.out, ',', '"')
	e.out = append(e.out, name...)
	e.out = append(e.out, '"', ':')
	e.each(v, shapeString)
}

// each writes the elements of a checked array span of sh as a v1.0 array.
func (e *storedEmitter) each(v span, sh shape) {
	e.out = append(e.out, '[')
	if len(v) > 2 && v[0] == '[' {
		s := storedScanner{b: v, i: 1, trusted: true}
		for n := 0; ; n++ {
			item, ok := s.sub(sh)
			if !ok {
				e.bad = true
				return
			}
			if n > 0 {
				e.out = append(e.out, ',')
			}
			switch sh {
			case shapeString:
				e.str(item)
			case shapePart:
				ok = e.part(item)
			case shapeArtifact:
				ok = e.artifact(item)
			case shapeMessage:
				ok = e.message(item)
			default:
				ok = false
			}
			if !ok {
				e.bad = true
				return
			}
			if !s.eat(',') {
				break
			}
		}
	}
	e.out = append(e.out, ']')
}

func (e *storedEmitter) status(v span) bool {
	var st storedStatus
	s := storedScanner{b: v, trusted: true}
	if !s.statusInto(&st) {
		return false
	}
	e.lit(`{"state":`)
	e.upper("TASK_STATE_", st.state, true)
	if st.message != nil {
		e.lit(`,"message":`)
		if !e.message(st.message) {
			return false
		}
	}
	e.strField("timestamp", st.timestamp)
	e.out = append(e.out, '}')
	return true
}

// upper writes the v1.0 enum name of the string span v: for a state
// (dashes) v10State's, for a role "ROLE_" and the role in upper case.
func (e *storedEmitter) upper(prefix string, v span, dashes bool) {
	if v == nil || len(v) == 2 || !plainString(v) || (dashes && spanIs(v, string(StateUnknown))) {
		w := spanString(v)
		if dashes {
			e.string(v10State(TaskState(w)))
		} else {
			e.string(prefix + strings.ToUpper(w))
		}
		return
	}
	e.out = append(e.out, '"')
	e.out = append(e.out, prefix...)
	for _, c := range v[1 : len(v)-1] {
		switch {
		case c == '-' && dashes:
			c = '_'
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		e.out = append(e.out, c)
	}
	e.out = append(e.out, '"')
}

// plainASCII: v holds printable ASCII json.Marshal writes as it is.
func plainASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// string writes v as json.Marshal does.
func (e *storedEmitter) string(v string) {
	if plainASCII(v) {
		e.out = append(e.out, '"')
		e.out = append(e.out, v...)
		e.out = append(e.out, '"')
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.bad = true
		return
	}
	e.out = append(e.out, b...)
}

func (e *storedEmitter) message(v span) bool {
	var m storedMessage
	s := storedScanner{b: v, trusted: true}
	if !s.messageInto(&m) {
		return false
	}
	e.lit(`{"messageId":`)
	e.str(m.messageID)
	e.strField("contextId", m.contextID)
	e.strField("taskId", m.taskID)
	e.lit(`,"role":`)
	e.upper("ROLE_", m.role, false)
	e.lit(`,"parts":`)
	e.each(m.parts, shapePart)
	e.field("metadata", m.metadata, true)
	e.strings("extensions", m.extensions)
	e.strings("referenceTaskIds", m.refs)
	e.out = append(e.out, '}')
	return true
}

func (e *storedEmitter) part(v span) bool {
	var p storedPart
	s := storedScanner{b: v, trusted: true}
	if !s.partInto(&p) {
		return false
	}
	e.out = append(e.out, '{')
	mark := len(e.out)
	text, file := spanIs(p.kind, string(PartText)), p.file != nil && spanIs(p.kind, string(PartFile))
	if text {
		e.lit(`,"text":`)
		e.str(p.text)
	}
	if file {
		e.strField("raw", p.bytes)
		e.strField("url", p.uri)
	}
	e.field("data", p.data, true)
	if file {
		e.strField("mediaType", p.mimeType)
		e.strField("filename", p.name)
	}
	e.field("metadata", p.metadata, true)
	if len(e.out) > mark { // the first field's comma goes
		e.out = append(e.out[:mark], e.out[mark+1:]...)
	}
	e.out = append(e.out, '}')
	return true
}

func (e *storedEmitter) artifact(v span) bool {
	var a storedArtifact
	s := storedScanner{b: v, trusted: true}
	if !s.artifactInto(&a) {
		return false
	}
	e.lit(`{"artifactId":`)
	e.str(a.artifactID)
	e.strField("name", a.name)
	e.strField("description", a.description)
	e.lit(`,"parts":`)
	e.each(a.parts, shapePart)
	e.field("metadata", a.metadata, true)
	e.strings("extensions", a.extensions)
	e.out = append(e.out, '}')
	return true
}

func (e *storedEmitter) task(v span) bool {
	var t storedTask
	s := storedScanner{b: v, trusted: true}
	if !s.taskInto(&t) {
		return false
	}
	e.lit(`{"id":`)
	e.str(t.id)
	e.lit(`,"contextId":`)
	e.str(t.contextID)
	e.lit(`,"status":`)
	if t.status == nil {
		e.lit(`{"state":"TASK_STATE_UNSPECIFIED"}`)
	} else if !e.status(t.status) {
		return false
	}
	if len(t.artifacts) > 2 && t.artifacts[0] == '[' {
		e.lit(`,"artifacts":`)
		e.each(t.artifacts, shapeArtifact)
	}
	if len(t.history) > 2 && t.history[0] == '[' {
		e.lit(`,"history":`)
		e.each(t.history, shapeMessage)
	}
	e.field("metadata", t.metadata, true)
	e.out = append(e.out, '}')
	return true
}
