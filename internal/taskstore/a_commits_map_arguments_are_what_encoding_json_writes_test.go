package taskstore

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// A commit's fields and configs go to the script as encoding/json writes
// them, whether written directly (plain strings) or by encoding/json (any
// other): maps of every shape, and a buffer of one map never shows in the
// next.
func TestACommitsMapArgumentsAreWhatEncodingJSONWrites(t *testing.T) {
	t.Parallel()
	want := func(m map[string]string) string {
		if len(m) == 0 {
			return ""
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	maps := []map[string]string{nil, {}, {"s": "working"}, {"s": "working", "ctx": "c-1", "o": "tenant:a", "rs": "1024"},
		{"": ""}, {"a": "<b>"}, {"q": `say "hi"`}, {"p": `C:\x`}, {"u": "é"}, {"n": "a\nb"}, {"t": "\x7f"}, {"amp": "&"},
		{"k1": "1", "k2": "2", "k3": "3", "k4": "4", "k5": "5", "k6": "6", "k7": "7", "k8": "8", "k9": "9", "k10": "10"},
		{"c1": `{"id":"c1","url":"http://127.0.0.1/hook"}`}}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abcXYZ019 :-_./{}[]\"\\<>&\n\t\x01\x7f\xc3\xa9\xff")
	for range 2000 {
		m := map[string]string{}
		for range r.IntN(6) {
			k, v := make([]byte, r.IntN(5)), make([]byte, r.IntN(9))
			for i := range k {
				k[i] = alphabet[r.IntN(len(alphabet))]
			}
			for i := range v {
				v[i] = alphabet[r.IntN(len(alphabet))]
			}
			m[string(k)] = string(v)
		}
		maps = append(maps, m)
	}
	prev := ""
	for _, m := range maps {
		got := stringMapJSON(m)
		if w := want(m); got != w {
			t.Fatalf("map %q: got %q, want %q (the map before it gave %q)", m, got, w, prev)
		}
		prev = got
	}
}
