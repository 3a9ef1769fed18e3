package taskstore

import (
	"encoding/json"
	"slices"
	"strings"
)

// stringMapJSON is json.Marshal(m) ("" for an empty map), as the commit
// script's map arguments take it. A map whose keys and values are all
// printable ASCII with nothing JSON or encoding/json escapes (what a
// commit's fields are) is written here, byte for byte as encoding/json
// writes it (keys sorted); any other goes through encoding/json.
func stringMapJSON(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	n := 1
	for k, v := range m {
		if !plainJSON(k) || !plainJSON(v) {
			b, _ := json.Marshal(m) // (strings only: cannot fail)
			return string(b)
		}
		n += len(k) + len(v) + 6
	}
	var arr [8]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(k)
		b.WriteString(`":"`)
		b.WriteString(m[k])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// plainJSON tells whether encoding/json writes s as it is, between quotes:
// printable ASCII, without '"', '\\', or the '<', '>' and '&' it escapes
// for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
