package layout

// NamedScript is what the tests of the Named scripts see of one.
type NamedScript struct {
	Args      string // the Go type of its arguments, package path and name
	Pkg       string // the package that declares it
	Lib, Body string
	Names     []string
}

// NamedScripts returns every Named script made so far (the packages a test
// binary imports make theirs when they start).
func NamedScripts() []NamedScript {
	registry.Lock()
	defer registry.Unlock()
	out := make([]NamedScript, 0, len(registry.scripts))
	for _, s := range registry.scripts {
		out = append(out, NamedScript{Args: s.args.PkgPath() + "." + s.args.Name(), Pkg: s.args.PkgPath(), Lib: s.lib, Body: s.body, Names: s.names})
	}
	return out
}

// LibFor is libFor: the shared functions a script of body is given.
var LibFor = libFor

// LibFuncs returns the names of the shared functions, in order.
func LibFuncs() []string {
	var out []string
	for _, f := range libFuncs {
		out = append(out, f.name)
	}
	return out
}
