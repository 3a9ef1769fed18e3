package config

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
)

// ErrHelp is returned by Load when the arguments ask for help (-h, --help).
// It is flag.ErrHelp, so errors.Is works with either.
var ErrHelp = flag.ErrHelp

// Names of the setting that points at the YAML file.
const (
	configFlag = "config"
	configEnv  = "RELAY_CONFIG"
)

// SettingError is a bad value for one setting. Source says where the value
// came from, in the form the user wrote it: "--partitions",
// "RELAY_RETRY_INITIAL" or "relay.yaml:12: retry_initial".
type SettingError struct {
	Key    string // YAML key of the setting, e.g. retry_initial
	Source string
	Err    error
}

// Error implements error.
func (e *SettingError) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *SettingError) Unwrap() error { return e.Err }

// Defaults returns the configuration relay runs with when nothing is set.
// PublicURL is left empty here; Load derives it.
func Defaults() Config {
	var c Config
	for _, s := range Settings() {
		if s.value.set == nil {
			continue
		}
		if err := s.value.set(&c, s.Default); err != nil {
			panic(fmt.Sprintf("config: bad default for %s: %v", s.Key, err))
		}
	}
	c.Agent.Skills = defaultSkills()
	return c
}

// Load builds the Config from, in rising order of precedence, the defaults,
// the YAML file named by --config or RELAY_CONFIG, the RELAY_* variables
// that env returns (a nil env reads none) and the flags in args (the
// arguments after the command name). It returns ErrHelp for -h or --help.
func Load(args []string, env func(string) string) (Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	flags, err := parseFlags(args)
	if err != nil {
		return Config{}, err
	}
	l := &loader{cfg: Defaults(), sources: map[string]string{}}
	steps := []func() error{
		func() error { return l.loadFile(flags, env) },
		func() error { return l.loadEnv(env) },
		func() error { return l.loadFlags(flags) },
		l.finish,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return Config{}, err
		}
	}
	return l.cfg, nil
}

// flagValues are the flags given on the command line, as raw text.
type flagValues struct {
	config    string
	configSet bool
	values    map[string]string // setting key → raw value
}

// parseFlags parses args into raw values; values are validated later, in
// precedence order, so that errors name the flag the same way env errors do.
func parseFlags(args []string) (flagValues, error) {
	fv := flagValues{values: map[string]string{}}
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Func(configFlag, "YAML configuration file", func(v string) error {
		fv.config, fv.configSet = v, true
		return nil
	})
	for _, s := range Settings() {
		if s.Flag == "" {
			continue
		}
		fs.Func(s.Flag, s.Help, func(v string) error {
			if old, ok := fv.values[s.Key]; ok && s.value.isList {
				v = old + "," + v // a repeated list flag adds to the list
			}
			fv.values[s.Key] = v
			return nil
		})
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fv, ErrHelp
		}
		return fv, fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return fv, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	return fv, nil
}

// loader accumulates the layers into cfg, remembering where each setting's
// value came from so that later checks can name it.
type loader struct {
	cfg     Config
	sources map[string]string // setting key → Source of its current value
}

// set parses and stores raw as the value of s, which came from source.
func (l *loader) set(s Setting, raw, source string) error {
	if err := s.value.set(&l.cfg, raw); err != nil {
		return &SettingError{Key: s.Key, Source: source, Err: err}
	}
	l.sources[s.Key] = source
	return nil
}

// source returns how the user set key, or the key itself for a default.
func (l *loader) source(key string) string {
	return cmp.Or(l.sources[key], key)
}

// name returns the env var or flag that set key, or else the key itself
// (for a default or a value from the file), to mention key in an error
// about another setting.
func (l *loader) name(key string) string {
	if src := l.sources[key]; src != "" && !strings.Contains(src, ":") {
		return src
	}
	return key
}

// loadFile applies the YAML file named by --config or RELAY_CONFIG, if any.
func (l *loader) loadFile(flags flagValues, env func(string) string) error {
	path, from := env(configEnv), configEnv
	if flags.configSet {
		path, from = flags.config, "--"+configFlag
	}
	if path == "" {
		if flags.configSet {
			return fmt.Errorf("%s: empty file name", from)
		}
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	return l.loadYAML(path, data)
}

// loadEnv applies every RELAY_* variable that is set and not empty.
func (l *loader) loadEnv(env func(string) string) error {
	for _, s := range Settings() {
		if s.Env == "" {
			continue
		}
		if v := env(s.Env); v != "" {
			if err := l.set(s, v, s.Env); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadFlags applies the flags given on the command line.
func (l *loader) loadFlags(flags flagValues) error {
	for _, s := range Settings() {
		if v, ok := flags.values[s.Key]; ok {
			if err := l.set(s, v, "--"+s.Flag); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish checks what involves more than one setting and derives PublicURL.
func (l *loader) finish() error {
	c := &l.cfg
	if c.RetryMaxInterval < c.RetryInitial {
		return &SettingError{Key: "retry_max_interval", Source: l.source("retry_max_interval"),
			Err: fmt.Errorf("%s is less than %s (%s)", c.RetryMaxInterval, l.name("retry_initial"), c.RetryInitial)}
	}
	if err := checkSkills(c.Agent.Skills); err != nil {
		return &SettingError{Key: "agent.skills", Source: l.source("agent.skills"), Err: err}
	}
	if ext := c.Agent.ExtendedCard; ext != nil {
		if err := checkSkills(ext.Skills); err != nil {
			return &SettingError{Key: "agent.extended_card", Source: l.source("agent.extended_card"), Err: err}
		}
		if err := checkClientCards(ext, c.Security.APIKeys); err != nil {
			return &SettingError{Key: "agent.extended_card", Source: l.source("agent.extended_card"), Err: err}
		}
	}
	if err := l.checkSecurity(); err != nil {
		return err
	}
	if err := l.checkBackends(); err != nil {
		return err
	}
	if (c.GRPCTLSCert == "") != (c.GRPCTLSKey == "") {
		key := "grpc_tls_key"
		if c.GRPCTLSCert == "" {
			key = "grpc_tls_cert"
		}
		return &SettingError{Key: key, Source: l.source(key), Err: fmt.Errorf("gRPC TLS needs both %s and %s", l.name("grpc_tls_cert"), l.name("grpc_tls_key"))}
	}
	if c.Addr == "" {
		c.Addr = defaultAddr(c)
	}
	if c.PublicURL == "" {
		c.PublicURL = derivePublicURL(c.Addr)
	}
	return nil
}

// Listen addresses used when addr is not set.
const (
	// loopbackAddr keeps a relay without client authentication (the
	// quickstart) out of reach of other machines.
	loopbackAddr = "127.0.0.1:8080"
	// allInterfacesAddr is where a relay that authenticates its clients listens.
	allInterfacesAddr = ":8080"
)

// defaultAddr is the listen address when none was given: loopback only
// while clients need no credentials, every interface once they do.
func defaultAddr(c *Config) string {
	if on, err := c.AuthOn(); err == nil && !on {
		return loopbackAddr
	}
	return allInterfacesAddr
}

// checkSkills requires every skill to have a name and a unique id.
func checkSkills(skills []SkillConfig) error {
	seen := map[string]bool{}
	for i, s := range skills {
		switch {
		case s.ID == "":
			return fmt.Errorf("skill %d: id must not be empty", i)
		case s.Name == "":
			return fmt.Errorf("skill %q: name must not be empty", s.ID)
		case seen[s.ID]:
			return fmt.Errorf("skill id %q appears twice", s.ID)
		}
		seen[s.ID] = true
	}
	return nil
}

// checkClientCards checks the clients' extended cards: each is for a
// configured API key's client or a JWT principal (jwt:<iss>|<sub>), and
// its skills, with the common extended ones, are valid and unique.
func checkClientCards(ext *ExtendedCardConfig, apiKeys []string) error {
	names := map[string]bool{}
	for _, k := range apiKeys {
		name, _, _ := strings.Cut(k, ":")
		names[name] = true
	}
	for _, who := range slices.Sorted(maps.Keys(ext.Clients)) {
		if !names[who] && !strings.HasPrefix(who, "jwt:") {
			return fmt.Errorf("clients: %q is neither the name of an API key (api_keys) nor jwt:<iss>|<sub>", who)
		}
		if err := checkSkills(append(slices.Clip(ext.Skills), ext.Clients[who].Skills...)); err != nil {
			return fmt.Errorf("clients: %q: %w", who, err)
		}
	}
	return nil
}

// derivePublicURL returns the URL a local client reaches addr at:
// http://localhost:<port> for a wildcard host, else http://<host>:<port>.
func derivePublicURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://localhost" // unreachable: addr was validated
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
