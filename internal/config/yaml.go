package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// loadYAML applies the YAML document in data, read from file. It walks the
// node tree itself, rather than decoding into Config, so that scalars go
// through the same parsers as env vars and flags and every error names the
// key and line: "relay.yaml:12: retry_initial: invalid duration "abc"".
func (l *loader) loadYAML(file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty file, or comments only
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: want exactly one YAML document", file)
	}
	if len(doc.Content) != 1 {
		return nil
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: want a mapping of settings at the top level", file, root.Line)
	}
	return l.walkMap(file, root, "", bySection())
}

// bySection maps each setting's key, and each section (agent), to its Setting;
// a section maps to a Setting with an empty Key.
func bySection() map[string]Setting {
	m := map[string]Setting{}
	for _, s := range Settings() {
		m[s.Key] = s
		if i := strings.LastIndexByte(s.Key, '.'); i > 0 {
			m[s.Key[:i]] = Setting{}
		}
	}
	return m
}

// walkMap applies each key of the mapping m, whose keys are under prefix.
func (l *loader) walkMap(file string, m *yaml.Node, prefix string, known map[string]Setting) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		key := prefix + k.Value
		at := fmt.Sprintf("%s:%d: %s", file, k.Line, key)
		s, ok := known[key]
		switch {
		case k.Kind != yaml.ScalarNode:
			return fmt.Errorf("%s:%d: keys must be plain names", file, k.Line)
		case !ok:
			return &SettingError{Key: key, Source: at, Err: errors.New("unknown key")}
		case seen[key]:
			return &SettingError{Key: key, Source: at, Err: errors.New("set twice")}
		}
		seen[key] = true
		if err := l.applyNode(file, s, key, v, at, known); err != nil {
			return err
		}
	}
	return nil
}

// applyNode applies the value v of key; s is its Setting, empty for a section.
func (l *loader) applyNode(file string, s Setting, key string, v *yaml.Node, at string, known map[string]Setting) error {
	switch {
	case isNull(v):
		return nil // key: with no value leaves the default
	case s.Key == "":
		if v.Kind != yaml.MappingNode {
			return &SettingError{Key: key, Source: at, Err: errors.New("want a mapping")}
		}
		return l.walkMap(file, v, key+".", known)
	case s.value.field != nil:
		return l.decodeStrict(file, s, v, at)
	}
	raw, err := scalarText(v, s.value.isList)
	if err != nil {
		return &SettingError{Key: key, Source: at, Err: err}
	}
	return l.set(s, raw, at)
}

// scalarText returns the text of a scalar node or, for a list setting, of a
// sequence of scalars joined with commas (a scalar is a comma-separated list).
func scalarText(v *yaml.Node, isList bool) (string, error) {
	if v.Kind == yaml.ScalarNode {
		return v.Value, nil
	}
	if !isList {
		return "", errors.New("want a single value")
	}
	if v.Kind != yaml.SequenceNode {
		return "", errors.New("want a list")
	}
	items := make([]string, 0, len(v.Content))
	for _, item := range v.Content {
		item = resolve(item)
		if item.Kind != yaml.ScalarNode {
			return "", fmt.Errorf("line %d: want a list of single values", item.Line)
		}
		items = append(items, item.Value)
	}
	return strings.Join(items, ","), nil
}

// decodeStrict decodes v into the field of the YAML-only setting s,
// refusing keys the field's type does not have.
func (l *loader) decodeStrict(file string, s Setting, v *yaml.Node, at string) error {
	ptr := s.value.field(&l.cfg)
	if path, line, ok := unknownKey(v, reflect.TypeOf(ptr).Elem(), ""); ok {
		src := fmt.Sprintf("%s:%d: %s%s", file, line, s.Key, path)
		return &SettingError{Key: s.Key, Source: src, Err: errors.New("unknown key")}
	}
	if err := v.Decode(ptr); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			err = errors.New(strings.Join(te.Errors, "; "))
		}
		return &SettingError{Key: s.Key, Source: at, Err: err}
	}
	l.sources[s.Key] = at
	return nil
}

// unknownKey finds the first mapping key under n that type t has no yaml
// field for, returning its path below n (e.g. "[0].tag") and line.
func unknownKey(n *yaml.Node, t reflect.Type, path string) (string, int, bool) {
	n = resolve(n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				return path + "." + k.Value, k.Line, true
			}
			if p, line, bad := unknownKey(n.Content[i+1], ft, path+"."+k.Value); bad {
				return p, line, true
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			if p, line, bad := unknownKey(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); bad {
				return p, line, true
			}
		}
	}
	return "", 0, false // type mismatches are left to Decode
}

// yamlFields maps the YAML keys of struct type t to their field types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		m[cmp.Or(name, strings.ToLower(f.Name))] = f.Type // yaml.v3's default key
	}
	return m
}

// resolve follows aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; i < 16 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is an explicit or implicit null (key: with no value).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
