package layout

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

// Named is a script whose arguments (ARGV) are declared once, by name: they
// are the fields of A, a struct, each named by its `lua` tag. The Go caller
// fills an A and sends Args of it; the script's body reads each argument as
// the local of its name, which a prelude generated from A binds, so that
// neither side counts positions. The prelude is the one `local` statement
// a body would otherwise write by hand (local a, b = ARGV[1], ARGV[2]): it
// costs Redis nothing more, and Args costs the caller less than a
// hand-made argument list does (see Args).
//
// A tag is "name", "name,number" (the local is tonumber of the argument)
// or, on a last field of type []string or [][]byte, "name,rest": its
// elements follow the others, one per argument, and the local name is the
// index in ARGV of the first of them (the body reads them as ARGV[i] for
// i from name to #ARGV). A field is a string, []byte, int, int64 or bool (a
// bool is sent as 1 or 0).
//
// Every Named script is recorded when made, so that a test holds each
// body to reading exactly the names its Go side declares, none by position
// (scripts_read_the_arguments_go_names_test.go).
type Named[A any] struct {
	*redis.Script
	fields []argField
	rest   argField // kind Invalid: none; String: []string; Slice: [][]byte
	// texts and ints count the fields sent as a string (string, []byte)
	// and as an int64 (int, int64).
	texts, ints int
}

// argField is one of A's fields: where it lies in an A and its type, told
// by its kind (String, Slice for []byte, Int, Int64 or Bool), which is
// checked when the script is made: Args reads A's fields directly, as an
// argument list written by hand would, so that an A it is given need not
// be allocated.
type argField struct {
	offset uintptr
	kind   reflect.Kind
}

// ScriptOf returns the script of body, whose arguments are the fields of A,
// after the shared functions (as Script) and the prelude that binds them.
// A that is not a struct of tagged fields of the types Named takes is a
// programming error: ScriptOf panics.
func ScriptOf[A any](body string) *Named[A] { return named[A](libFor(body), body) }

// BareScriptOf is ScriptOf without the shared functions, for a script that
// needs none of them (so that Redis need not define them at each call).
func BareScriptOf[A any](body string) *Named[A] { return named[A]("", body) }

func named[A any](lib, body string) *Named[A] {
	t := reflect.TypeFor[A]()
	pre, s, names := prelude[A](t)
	s.Script = redis.NewScript(lib + pre + body)
	registry.Lock()
	registry.scripts = append(registry.scripts, namedScript{args: t, lib: lib, body: body, names: names})
	registry.Unlock()
	return s
}

var luaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// luaKeywords are the names Lua reserves.
var luaKeywords = strings.Fields("and break do else elseif end false for function if in local nil not or repeat return then true until while")

// prelude returns the Lua that binds A's fields to their locals, the Named
// that lays them out, and the names, in order.
func prelude[A any](t reflect.Type) (string, *Named[A], []string) {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("layout: script arguments %v: not a struct", t))
	}
	s := &Named[A]{}
	var names, values []string
	seen := map[string]bool{}
	restName := ""
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("lua")
		name, opt, _ := strings.Cut(tag, ",")
		switch {
		case !ok || !luaName.MatchString(name) || slices.Contains(luaKeywords, name):
			panic(fmt.Sprintf("layout: script arguments %v.%s: no lua name", t, f.Name))
		case seen[name]:
			panic(fmt.Sprintf("layout: script arguments %v: %s named twice", t, name))
		case !f.IsExported():
			panic(fmt.Sprintf("layout: script arguments %v.%s: unexported", t, f.Name))
		case s.rest.kind != reflect.Invalid:
			panic(fmt.Sprintf("layout: script arguments %v: %s after the rest", t, name))
		}
		seen[name] = true
		if opt == "rest" {
			switch f.Type {
			case reflect.TypeFor[[]string]():
				s.rest = argField{offset: f.Offset, kind: reflect.String}
			case reflect.TypeFor[[][]byte]():
				s.rest = argField{offset: f.Offset, kind: reflect.Slice}
			default:
				panic(fmt.Sprintf("layout: script arguments %v.%s: a rest is []string or [][]byte", t, f.Name))
			}
			restName = name
			continue
		}
		var kind reflect.Kind
		switch f.Type {
		case reflect.TypeFor[string](), reflect.TypeFor[[]byte](), reflect.TypeFor[int](), reflect.TypeFor[int64](), reflect.TypeFor[bool]():
			kind = f.Type.Kind()
		default:
			panic(fmt.Sprintf("layout: script arguments %v.%s: type %v", t, f.Name, f.Type))
		}
		v := "ARGV[" + strconv.Itoa(len(names)+1) + "]"
		switch opt {
		case "":
		case "number":
			v = "tonumber(" + v + ")"
		default:
			panic(fmt.Sprintf("layout: script arguments %v.%s: option %q", t, f.Name, opt))
		}
		s.fields = append(s.fields, argField{offset: f.Offset, kind: kind})
		switch kind {
		case reflect.String, reflect.Slice:
			s.texts++
		case reflect.Int, reflect.Int64:
			s.ints++
		}
		names, values = append(names, name), append(values, v)
	}
	var b strings.Builder
	if len(names) > 0 {
		b.WriteString("local " + strings.Join(names, ", ") + " = " + strings.Join(values, ", ") + "\n")
	}
	if restName != "" {
		b.WriteString("local " + restName + " = " + strconv.Itoa(len(names)+1) + "\n")
		names = append(names, restName)
	}
	return b.String(), s, names
}

// Args returns a's fields as the script's arguments, in the order of the
// prelude's locals, then the rest's elements. A string or []byte goes as a
// *string, an int or int64 as a *int64 (go-redis writes what they point
// to, as it would the value), into one array of each made for the call:
// a value put into an interface would be allocated on its own, one per
// argument. A []byte's string shares its bytes, as the []byte itself
// would: the caller leaves them be until the command has run.
func (s *Named[A]) Args(a *A) []any {
	p := unsafe.Pointer(a)
	var strs []string
	var raws [][]byte
	switch s.rest.kind {
	case reflect.String:
		strs = *(*[]string)(unsafe.Add(p, s.rest.offset))
	case reflect.Slice:
		raws = *(*[][]byte)(unsafe.Add(p, s.rest.offset))
	}
	args := make([]any, 0, len(s.fields)+len(strs)+len(raws))
	texts := make([]string, 0, s.texts+len(strs)+len(raws))
	var ints []int64
	if s.ints > 0 {
		ints = make([]int64, 0, s.ints)
	}
	text := func(v string) {
		texts = append(texts, v)
		args = append(args, &texts[len(texts)-1])
	}
	for _, f := range s.fields {
		q := unsafe.Add(p, f.offset)
		switch f.kind {
		case reflect.String:
			text(*(*string)(q))
		case reflect.Slice:
			text(bytesText(*(*[]byte)(q)))
		case reflect.Int:
			ints = append(ints, int64(*(*int)(q)))
			args = append(args, &ints[len(ints)-1])
		case reflect.Int64:
			ints = append(ints, *(*int64)(q))
			args = append(args, &ints[len(ints)-1])
		case reflect.Bool:
			args = append(args, *(*bool)(q)) // (a bool is not allocated)
		}
	}
	for _, e := range strs {
		text(e)
	}
	for _, e := range raws {
		text(bytesText(e))
	}
	return args
}

// bytesText is b as a string that shares its bytes.
func bytesText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// namedScript is what tests check of a Named script: that its body uses
// every name its arguments declare, and no other.
type namedScript struct {
	args  reflect.Type
	lib   string
	body  string
	names []string
}

var registry struct {
	sync.Mutex
	scripts []namedScript
}
