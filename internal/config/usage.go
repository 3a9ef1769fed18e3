package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Usage returns the help text: every setting with its flag, environment
// variable, YAML key, default and description, grouped by subject.
func Usage() string {
	var b strings.Builder
	b.WriteString(`Every setting is a flag, a RELAY_* environment variable and a key of the YAML
file. Precedence: flags > environment > YAML file > defaults.
Durations use Go syntax: 200ms, 1s, 5m, 24h.

  --config FILE, RELAY_CONFIG
        YAML file to read settings from (see configs/relay.yaml); unknown keys
        are an error. Default: none.
`)
	all := Settings()
	for _, g := range groups() {
		fmt.Fprintf(&b, "\n%s:\n", g)
		for _, s := range all {
			if s.Group == g {
				writeSetting(&b, s)
			}
		}
	}
	return b.String()
}

// writeSetting writes one setting's entry of Usage.
func writeSetting(b *strings.Builder, s Setting) {
	if s.YAMLOnly() {
		fmt.Fprintf(b, "  %s\n", s.Key)
	} else {
		fmt.Fprintf(b, "  --%s, %s, %s\n", s.Flag, s.Env, s.Key)
	}
	help := s.Help + " Default: " + showDefault(s) + "."
	for _, line := range wrap(help, 70) {
		fmt.Fprintf(b, "        %s\n", line)
	}
}

// showDefault formats a default for Usage, quoting it when it holds spaces.
func showDefault(s Setting) string {
	switch {
	case s.Default == "":
		return "empty"
	case !s.YAMLOnly() && strings.ContainsRune(s.Default, ' '):
		return strconv.Quote(s.Default)
	}
	return s.Default
}

// wrap splits text into lines of at most width characters, breaking at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
