package a2a

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// ProtoJSON field names. A2A v1.0 is ProtoJSON, whose parsers accept a
// field under its lowerCamel JSON name (taskId) and under the proto's
// original snake_case name (task_id). relay's v1.0 decoders read the
// lowerCamel names, so v1.0 params pass once, at the edge, through
// normalizeNames, which rewrites every member name holding an underscore
// to its lowerCamel form, in messages, parts, push configs, list filters
// and whatever else the params hold.
//
// Free-form values keep their keys: a metadata object
// (google.protobuf.Struct) and a part's data (google.protobuf.Value) hold
// the client's own keys, which are not field names and are passed on as
// they came. Any member named metadata or data (in any case, as Go's
// decoder matches names: foldName) is taken as such a value.
//
// Two members of one object that name the same field (task_id and taskId,
// or one name twice, or names that differ in case only, which Go's
// decoder reads as one: foldName) are refused as invalid params, as ProtoJSON parsers refuse
// a field given twice: which of the two the client meant would be a guess.
// Other unknown names are still ignored, as before.

// maxNameDepth bounds the nesting normalizeNames descends into; no A2A
// request nests that deep, and what lies deeper is passed as it came.
const maxNameDepth = 32

// normalizeNames returns params with its member names spelled in
// lowerCamel (see above), or params itself when none needed rewriting.
// params must be JSON (malformed input is invalid params, never a panic).
func normalizeNames(params json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		return params, nil
	}
	n := nameNormalizer{in: params}
	if err := n.value(0); err != nil {
		return nil, err
	}
	if n.skipSpace(); n.i != len(n.in) {
		return nil, errMalformedParams
	}
	if n.out == nil {
		return params, nil
	}
	return append(n.out, n.in[n.last:]...), nil
}

var errMalformedParams = InvalidParams("malformed JSON")

// nameNormalizer scans JSON, copying it to out (from the first rewritten
// name on) with rewritten member names.
type nameNormalizer struct {
	in   []byte
	i    int
	out  []byte // nil until a name is rewritten
	last int    // in[:last] is in out already
}

func (n *nameNormalizer) skipSpace() {
	for n.i < len(n.in) {
		switch n.in[n.i] {
		case ' ', '\t', '\n', '\r':
			n.i++
		default:
			return
		}
	}
}

// value reads one value, rewriting the names of the objects within it.
func (n *nameNormalizer) value(depth int) error {
	n.skipSpace()
	if n.i >= len(n.in) {
		return errMalformedParams
	}
	switch n.in[n.i] {
	case '{':
		if depth >= maxNameDepth {
			return n.skip()
		}
		return n.object(depth + 1)
	case '[':
		if depth >= maxNameDepth {
			return n.skip()
		}
		n.i++
		if n.skipSpace(); n.i < len(n.in) && n.in[n.i] == ']' {
			n.i++
			return nil
		}
		for {
			if err := n.value(depth + 1); err != nil {
				return err
			}
			if n.skipSpace(); n.i >= len(n.in) {
				return errMalformedParams
			}
			n.i++
			switch n.in[n.i-1] {
			case ',':
			case ']':
				return nil
			default:
				return errMalformedParams
			}
		}
	}
	return n.skip()
}

// object reads an object, rewriting its names and refusing a field named twice.
func (n *nameNormalizer) object(depth int) error {
	n.i++ // {
	if n.skipSpace(); n.i < len(n.in) && n.in[n.i] == '}' {
		n.i++
		return nil
	}
	var seen nameSet
	for {
		if n.skipSpace(); n.i >= len(n.in) || n.in[n.i] != '"' {
			return errMalformedParams
		}
		start := n.i
		if err := n.skipString(); err != nil {
			return err
		}
		raw := n.in[start:n.i]
		var name string
		if strings.IndexByte(string(raw), '\\') < 0 {
			name = string(raw[1 : len(raw)-1])
		} else if err := json.Unmarshal(raw, &name); err != nil {
			return errMalformedParams
		}
		field := name
		if strings.IndexByte(name, '_') >= 0 {
			field = lowerCamel(name)
			q, _ := json.Marshal(field)
			n.out = append(append(n.out, n.in[n.last:start]...), q...)
			n.last = n.i
		}
		folded := foldName(field)
		if seen.add(folded) {
			return InvalidParams("the field %q is given twice (in lowerCamel or snake_case, a field is given once)", field)
		}
		if n.skipSpace(); n.i >= len(n.in) || n.in[n.i] != ':' {
			return errMalformedParams
		}
		n.i++
		var err error
		if folded == foldedMetadata || folded == foldedData {
			err = n.skip() // the client's own keys
		} else {
			err = n.value(depth)
		}
		if err != nil {
			return err
		}
		if n.skipSpace(); n.i >= len(n.in) {
			return errMalformedParams
		}
		n.i++
		switch n.in[n.i-1] {
		case ',':
		case '}':
			return nil
		default:
			return errMalformedParams
		}
	}
}

// foldName is name as Go's decoder matches it to a field: each rune
// replaced by the least of its Unicode simple case folding orbit (so ASCII
// letters by their upper case, and ſ, s and S alike), which makes two names
// equal exactly when strings.EqualFold holds.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				return next
			}
			r = next
		}
	}, name)
}

var foldedMetadata, foldedData = foldName("metadata"), foldName("data")

// nameSet holds the (folded) names of one object: a few in a slice, more
// in a map, so that an object of many members costs no quadratic time.
type nameSet struct {
	few  []string
	many map[string]struct{}
}

// add adds name and reports whether it was there already.
func (s *nameSet) add(name string) bool {
	if s.many != nil {
		if _, ok := s.many[name]; ok {
			return true
		}
		s.many[name] = struct{}{}
		return false
	}
	for _, f := range s.few {
		if f == name {
			return true
		}
	}
	if s.few = append(s.few, name); len(s.few) > 16 {
		s.many = make(map[string]struct{}, 2*len(s.few))
		for _, f := range s.few {
			s.many[f] = struct{}{}
		}
	}
	return false
}

// skipString moves past the string that starts at n.i.
func (n *nameNormalizer) skipString() error {
	for n.i++; n.i < len(n.in); n.i++ {
		switch n.in[n.i] {
		case '\\':
			n.i++
		case '"':
			n.i++
			return nil
		}
	}
	return errMalformedParams
}

// skip moves past one value as it is, without recursion: strings are
// skipped whole, brackets counted.
func (n *nameNormalizer) skip() error {
	n.skipSpace()
	depth := 0
	for n.i < len(n.in) {
		switch c := n.in[n.i]; c {
		case '"':
			if err := n.skipString(); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 {
				return errMalformedParams
			}
			if depth == 0 {
				n.i++
				return nil
			}
		case ',', ':':
			if depth == 0 {
				return errMalformedParams
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return nil
			}
		default:
			if depth == 0 { // a number or a literal: up to the next delimiter
				start := n.i
				for n.i < len(n.in) && !strings.ContainsRune(",]} \t\n\r:{[\"", rune(n.in[n.i])) {
					n.i++
				}
				if start == n.i {
					return errMalformedParams
				}
				return nil
			}
		}
		n.i++
	}
	return errMalformedParams
}

// lowerCamel is the JSON name protoc gives a proto field name: each
// underscore dropped and the ASCII letter after it upper-cased.
func lowerCamel(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	up := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			up = true
			continue
		case up && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}
