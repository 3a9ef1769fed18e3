package layout_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	_ "github.com/a2arelay/relay/internal/auth" // (its Named scripts)
	"github.com/a2arelay/relay/internal/layout"
	_ "github.com/a2arelay/relay/internal/leader" // (its Named scripts)
	_ "github.com/a2arelay/relay/internal/outbox" // (its Named scripts)
	"github.com/a2arelay/relay/internal/redistest"
	_ "github.com/a2arelay/relay/internal/taskstore" // (its Named scripts)
	_ "github.com/a2arelay/relay/internal/workqueue" // (its Named scripts)
)

// What a script may read that is not an argument: Redis's Lua globals.
var luaGlobals = map[string]bool{}

func init() {
	for _, g := range strings.Fields(`KEYS ARGV redis cjson cmsgpack bit struct string table math os
		tonumber tostring type pairs ipairs next unpack select error pcall xpcall assert
		rawget rawset rawequal setmetatable getmetatable loadstring print _G`) {
		luaGlobals[g] = true
	}
}

// globalsOf returns the globals a Lua chunk reads or writes, anywhere in it.
func globalsOf(src string) (map[string]bool, error) {
	chunk, err := parse.Parse(strings.NewReader(src), "script")
	if err != nil {
		return nil, err
	}
	proto, err := lua.Compile(chunk, "script")
	if err != nil {
		return nil, err
	}
	got := map[string]bool{}
	var walk func(p *lua.FunctionProto)
	walk = func(p *lua.FunctionProto) {
		for _, inst := range p.Code {
			if op := int(inst >> 26); op == lua.OP_GETGLOBAL || op == lua.OP_SETGLOBAL {
				got[p.Constants[inst&0x3ffff].String()] = true
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	return got, nil
}

var positional = regexp.MustCompile(`ARGV\[[^\]]*[0-9]`)

// disagreements returns how a script's body and the names its Go side
// declares disagree: a name the body reads that Go does not declare (with
// the body alone, without the prelude, it is a global), a declared name
// the body never reads, an argument read by position.
func disagreements(lib, body string, names []string) ([]string, error) {
	globals, err := globalsOf(lib + body)
	if err != nil {
		return nil, err
	}
	var out []string
	for g := range globals {
		if !luaGlobals[g] && !slices.Contains(names, g) {
			out = append(out, "the body reads "+g+", which Go does not declare")
		}
	}
	for _, n := range names {
		if !globals[n] {
			out = append(out, "Go declares "+n+", which the body never reads (or binds itself)")
		}
	}
	if m := positional.FindString(body); m != "" {
		out = append(out, "the body reads an argument by position: "+m)
	}
	slices.Sort(out)
	return out, nil
}

// Every Named script's body reads exactly the arguments its Go side
// declares, each by its name.
func TestScriptsReadTheArgumentsGoNames(t *testing.T) {
	t.Parallel()
	made := map[string]int{}
	for _, s := range layout.NamedScripts() {
		made[s.Pkg]++
		got, err := disagreements(s.Lib, s.Body, s.Names)
		if err != nil {
			t.Errorf("%s: %v", s.Args, err)
		}
		for _, d := range got {
			t.Errorf("%s: %s", s.Args, d)
		}
	}
	// Every package that makes Named scripts is imported above, so that
	// all of them are checked.
	root := filepath.Join("..", "..")
	calls := regexp.MustCompile(`layout\.(Bare)?ScriptOf\[`)
	want := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := len(calls.FindAll(src, -1)); n > 0 {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			want["github.com/a2arelay/relay/"+filepath.ToSlash(rel)] += n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no package makes a Named script")
	}
	for pkg, n := range want {
		if made[pkg] != n {
			t.Errorf("%s makes %d Named scripts, %d checked: import it in this test (and make its scripts when it starts)", pkg, n, made[pkg])
		}
	}
}

// The check above catches a body and a Go side that disagree either way.
func TestScriptArgumentCheckCatchesDisagreements(t *testing.T) {
	t.Parallel()
	body := "local function f() return ttl end\nreturn {expected, f(), ARGV[3], ARGV[first + 1]}\n"
	got, err := disagreements("", body, []string{"expected", "snapshot", "first"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Go declares snapshot, which the body never reads (or binds itself)",
		"the body reads an argument by position: ARGV[3",
		"the body reads ttl, which Go does not declare",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("disagreements = %q\nwant %q", got, want)
	}
	// A body that binds a declared name itself hides the argument.
	got, _ = disagreements("", "local expected = ARGV[1]\nreturn expected", []string{"expected"})
	if len(got) != 2 {
		t.Errorf("a body binding its argument by position: %q, want two disagreements", got)
	}
}

type sample struct {
	Word   string   `lua:"word"`
	Raw    []byte   `lua:"raw"`
	Count  int64    `lua:"count,number"`
	Small  int      `lua:"small"`
	Flag   bool     `lua:"flag"`
	Events []string `lua:"first,rest"`
}

var sampleScript = layout.BareScriptOf[sample](
	"local out = {word, raw, tostring(count + 1), type(count), small, flag}\n" +
		"for i = first, #ARGV do out[#out + 1] = ARGV[i] end\n" +
		"return out\n")

// A Named script's body reads each field of its Go arguments by its name,
// as sent, and the rest after them.
func TestNamedScriptBindsEachFieldToItsName(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	a := sample{Word: "w", Raw: []byte("r\x00b"), Count: 41, Small: 7, Flag: true, Events: []string{"e1", "", "e3"}}
	got, err := sampleScript.Run(context.Background(), rdb, nil, sampleScript.Args(&a)...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"w", "r\x00b", "42", "number", "7", "1", "e1", "", "e3"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

var sink []any

// Args costs less than an argument list written by hand (compare the
// allocations of the two benchmarks).
func BenchmarkNamedArgs(b *testing.B) {
	a := sample{Word: "word", Raw: []byte("raw"), Count: 1764172800000, Small: 3, Flag: true, Events: []string{"e1", "e2"}}
	b.ReportAllocs()
	for b.Loop() {
		c := a
		sink = sampleScript.Args(&c)
	}
}

func BenchmarkHandWrittenArgs(b *testing.B) {
	a := sample{Word: "word", Raw: []byte("raw"), Count: 1764172800000, Small: 3, Flag: true, Events: []string{"e1", "e2"}}
	b.ReportAllocs()
	for b.Loop() {
		c := a
		args := append(make([]any, 0, 5+len(c.Events)), c.Word, c.Raw, c.Count, c.Small, c.Flag)
		for _, e := range c.Events {
			args = append(args, e)
		}
		sink = args
	}
}

// Arguments Named cannot bind by name are refused when the script is made.
func TestNamedRefusesArgumentsItCannotBind(t *testing.T) {
	t.Parallel()
	refused := func(name string, make func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: made", name)
			}
		}()
		make()
	}
	refused("not a struct", func() { layout.BareScriptOf[string]("") })
	refused("no tag", func() {
		layout.BareScriptOf[struct {
			A string
		}]("")
	})
	refused("a keyword", func() {
		layout.BareScriptOf[struct {
			A string `lua:"end"`
		}]("")
	})
	refused("named twice", func() {
		layout.BareScriptOf[struct {
			A string `lua:"a"`
			B string `lua:"a"`
		}]("")
	})
	refused("a type it does not send", func() {
		layout.BareScriptOf[struct {
			A float64 `lua:"a"`
		}]("")
	})
	refused("after the rest", func() {
		layout.BareScriptOf[struct {
			R []string `lua:"r,rest"`
			A string   `lua:"a"`
		}]("")
	})
	refused("an unknown option", func() {
		layout.BareScriptOf[struct {
			A string `lua:"a,num"`
		}]("")
	})
}
