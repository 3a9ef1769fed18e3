package layout

import (
	_ "embed"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// libLua holds the Lua functions several scripts share: stream ids, the
// event a lane entry refers to, the oldest event an outbox still needs, and
// the Lua side of the delivery record codec (record.go).
//
//go:embed lua/lib.lua
var libLua string

// Script returns a script whose body starts with the shared functions it
// uses (libFor), so that each script is still one self-contained body for
// Redis.
func Script(body string) *redis.Script { return redis.NewScript(libFor(body) + body) }

// libFunc is one function of libLua: its name, its text with the comment
// above it, and its code (the text without comments), which tells the
// other functions it calls.
type libFunc struct {
	name, text, code string
	uses             *regexp.Regexp // a word of the name
}

// libFuncs are libLua's functions, in its order.
var libFuncs = splitLib(libLua)

// splitLib cuts lib into its top-level functions ("local function name("
// up to an "end" of its own line), each with the lines above it since the
// previous one's end.
func splitLib(lib string) []libFunc {
	var out []libFunc
	var text, code strings.Builder
	name := ""
	for line := range strings.SplitAfterSeq(lib, "\n") {
		text.WriteString(line)
		c, _, _ := strings.Cut(line, "--") // (lib.lua has no "--" in a string)
		code.WriteString(c)
		if rest, ok := strings.CutPrefix(line, "local function "); ok && name == "" {
			name, _, _ = strings.Cut(rest, "(")
		}
		if name != "" && strings.TrimRight(line, "\n") == "end" {
			out = append(out, libFunc{name: name, text: text.String(), code: code.String(), uses: regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)})
			text.Reset()
			code.Reset()
			name = ""
		}
	}
	return out
}

// libFor returns the functions of libLua that body uses, in libLua's
// order, with those they call in turn: a function Redis would define at
// each call of the script, and the script never calls, is left out. A
// function counts as used when its name is a word of body, comments
// included, so that none that is called is missed, or of the code of a
// function used.
func libFor(body string) string {
	used := make([]bool, len(libFuncs))
	for changed := true; changed; {
		changed = false
		for i, f := range libFuncs {
			if used[i] {
				continue
			}
			if f.uses.MatchString(body) {
				used[i], changed = true, true
				continue
			}
			for j, g := range libFuncs {
				if used[j] && j != i && f.uses.MatchString(g.code) {
					used[i], changed = true, true
					break
				}
			}
		}
	}
	var b strings.Builder
	for i, f := range libFuncs {
		if used[i] {
			b.WriteString(f.text)
		}
	}
	return b.String()
}
