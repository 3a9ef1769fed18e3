package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// binder stores a setting's value into a Config.
type binder struct {
	// set parses raw text (from a flag, an env var or a YAML scalar),
	// validates it and stores it. Nil for YAML-only settings.
	set func(c *Config, raw string) error
	// isList marks a list setting: comma-separated in env and flags, a YAML
	// sequence in the file.
	isList bool
	// field returns a pointer to the field a YAML-only setting decodes into.
	field func(c *Config) any
}

// text binds a string setting; check, if not nil, validates and normalizes.
func text(field func(*Config) *string, check func(string) (string, error)) binder {
	return binder{set: func(c *Config, raw string) error {
		v := strings.TrimSpace(raw)
		if check != nil {
			var err error
			if v, err = check(v); err != nil {
				return err
			}
		}
		*field(c) = v
		return nil
	}}
}

// number binds an int setting that must be at least lo and, if hi > 0, at most hi.
func number(field func(*Config) *int, lo, hi int) binder {
	return binder{set: func(c *Config, raw string) error {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("invalid integer %q", raw)
		}
		if hi > 0 && (n < lo || n > hi) {
			return fmt.Errorf("must be between %d and %d, not %d", lo, hi, n)
		}
		if n < lo {
			return fmt.Errorf("must be at least %d, not %d", lo, n)
		}
		*field(c) = n
		return nil
	}}
}

// rate binds a float64 setting (a rate per second) between 0 and hi.
func rate(field func(*Config) *float64, hi float64) binder {
	return binder{set: func(c *Config, raw string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsNaN(v) {
			return fmt.Errorf("invalid number %q", raw)
		}
		if v < 0 || v > hi {
			return fmt.Errorf("must be between 0 and %g, not %g", hi, v)
		}
		*field(c) = v
		return nil
	}}
}

// duration binds a time.Duration setting in Go syntax (200ms, 1s, 5m). It
// must be positive, or merely not negative when zero is allowed.
func duration(field func(*Config) *time.Duration, zeroOK bool) binder {
	return binder{set: func(c *Config, raw string) error {
		d, err := time.ParseDuration(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("invalid duration %q (use Go syntax such as 200ms, 1s, 5m, 24h)", raw)
		}
		if d < 0 || (d == 0 && !zeroOK) {
			if zeroOK {
				return fmt.Errorf("must not be negative, not %s", raw)
			}
			return fmt.Errorf("must be positive, not %s", raw)
		}
		*field(c) = d
		return nil
	}}
}

// boolean binds a bool setting: true or false (also 1/0, yes/no, on/off).
func boolean(field func(*Config) *bool) binder {
	return binder{set: func(c *Config, raw string) error {
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true", "1", "yes", "on":
			*field(c) = true
		case "false", "0", "no", "off":
			*field(c) = false
		default:
			return fmt.Errorf("invalid value %q: want true or false", raw)
		}
		return nil
	}}
}

// list binds a []string setting given as comma-separated text; empty items
// are skipped and check validates and normalizes each item.
func list(field func(*Config) *[]string, check func(string) (string, error)) binder {
	return binder{isList: true, set: func(c *Config, raw string) error {
		var out []string
		for item := range strings.SplitSeq(raw, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			v, err := check(item)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		*field(c) = out
		return nil
	}}
}

// yamlOnly binds a structured setting that only the YAML file can set.
func yamlOnly(field func(*Config) any) binder {
	return binder{field: field}
}

// required accepts any non-empty string.
func required(v string) (string, error) {
	if v == "" {
		return "", errors.New("must not be empty")
	}
	return v, nil
}

// oneOf accepts one of the given words, case-insensitively, and returns it
// in lower case.
func oneOf(words ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		lower := strings.ToLower(v)
		for _, w := range words {
			if lower == w {
				return w, nil
			}
		}
		return "", fmt.Errorf("invalid value %q: want one of %s", v, strings.Join(words, ", "))
	}
}

// checkAddr accepts a listen address host:port with a numeric port.
func checkAddr(v string) (string, error) {
	if v == "" {
		return "", nil // chosen by Load: see defaultAddr
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("invalid address %q: want host:port, e.g. :8080 or 127.0.0.1:8080", v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("invalid port %q in address %q", port, v)
	}
	return v, nil
}

// checkHostPort accepts "" or host:port with a host and a port from 1 to 65535.
func checkHostPort(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return "", fmt.Errorf("invalid address %q: want host:port, e.g. relay.example.com:8081", v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("invalid port %q in address %q", port, v)
	}
	return v, nil
}

// checkPublicURL accepts "" (derive from addr) or an absolute http(s) URL
// without query or fragment, and strips trailing slashes.
func checkPublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("invalid URL %q: want an absolute http:// or https:// URL", v)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("invalid URL %q: must not have user info, a query or a fragment", v)
	}
	return strings.TrimRight(v, "/"), nil
}

// checkAuth accepts only "none", the one mode implemented so far.
func checkAuth(v string) (string, error) {
	switch v {
	case AuthAuto, AuthNone, AuthRequired:
		return v, nil
	}
	return "", fmt.Errorf("invalid value %q: want auto, required or none", v)
}

// checkRedisURL accepts "" (embedded store), a redis://, rediss:// or
// unix:// URL, or a Redis Cluster URL (redis+cluster://, rediss+cluster://).
func checkRedisURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if IsRedisClusterURL(v) {
		if _, err := RedisClusterOptions(v); err != nil {
			return "", err
		}
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		// url's error would echo the URL, password included.
		return "", errors.New("invalid URL: cannot be parsed")
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Host == "" {
			return "", fmt.Errorf("invalid URL %q: no host", u.Redacted())
		}
		if u.Query().Has("addr") {
			return "", fmt.Errorf("invalid URL %q: addr= names cluster nodes; for a cluster use %s://host:port,host:port",
				u.Redacted(), clusterScheme)
		}
	case "unix":
		if u.Path == "" {
			return "", fmt.Errorf("invalid URL %q: no socket path", u.Redacted())
		}
	default:
		return "", fmt.Errorf("unsupported scheme %q: want redis://, rediss://, unix://, redis+cluster:// or rediss+cluster://", u.Scheme)
	}
	return v, nil
}

// checkRedisPrefix accepts a non-empty prefix without whitespace or braces
// (braces would break the {partition} hash tags).
func checkRedisPrefix(v string) (string, error) {
	if v == "" {
		return "", errors.New("must not be empty")
	}
	if strings.ContainsAny(v, "{} \t\r\n") {
		return "", fmt.Errorf("invalid prefix %q: must not contain braces or whitespace", v)
	}
	return v, nil
}

// checkCIDR accepts an address range such as 10.0.0.0/8 or a bare IP (one
// address, /32 or /128), and returns it in canonical form.
func checkCIDR(v string) (string, error) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked().String(), nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil || a.Zone() != "" {
		return "", fmt.Errorf("invalid CIDR %q: want a range such as 127.0.0.0/8 or an IP address", v)
	}
	return netip.PrefixFrom(a, a.BitLen()).String(), nil
}

// checkJWTAlg accepts the signing algorithms relay implements.
func checkJWTAlg(v string) (string, error) {
	switch v {
	case "ES256", "EdDSA", "RS256":
		return v, nil
	}
	return "", fmt.Errorf("invalid value %q: must be ES256, EdDSA or RS256", v)
}

// checkStandardSignature accepts the operator's default Standard Webhooks
// schemes: v1 needs a secret per push config, so it is not one of them.
func checkStandardSignature(v string) (string, error) {
	switch v {
	case "off", "v1a":
		return v, nil
	}
	return "", fmt.Errorf("invalid value %q: must be off or v1a (v1 needs a secret per push config: set it in the config's webhook extension options)", v)
}

// checkProxyURL accepts "" or http://[user:password@]host:port; its errors
// never quote the value (it may hold a password).
func checkProxyURL(v string) (string, error) {
	if v == "" {
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "http" || u.Hostname() == "" || u.Port() == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("invalid proxy: want http://[user:password@]host:port")
	}
	return v, nil
}
