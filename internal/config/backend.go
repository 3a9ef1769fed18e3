package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Backend kinds: where a task's work is done.
const (
	BackendDemo     = "demo"
	BackendWorker   = "worker"
	BackendUpstream = "upstream"
)

// Backend is a parsed agent backend: "demo", "worker:<queue>" or the base
// URL of an upstream A2A agent.
type Backend struct {
	Kind string
	// Queue is the worker queue (Kind worker).
	Queue string
	// URL is the upstream agent's base URL (Kind upstream).
	URL string
}

// String returns the backend as it is written in the configuration.
func (b Backend) String() string {
	switch b.Kind {
	case BackendWorker:
		return BackendWorker + ":" + b.Queue
	case BackendUpstream:
		return b.URL
	}
	return BackendDemo
}

var queueName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// ParseBackend parses an agent backend.
func ParseBackend(v string) (Backend, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == BackendDemo:
		return Backend{Kind: BackendDemo}, nil
	case strings.HasPrefix(v, BackendWorker+":"):
		q := strings.TrimPrefix(v, BackendWorker+":")
		if !queueName.MatchString(q) {
			return Backend{}, fmt.Errorf("invalid value %q: a worker queue name is 1 to 128 letters, digits, '.', '_' or '-'", v)
		}
		return Backend{Kind: BackendWorker, Queue: q}, nil
	case strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://"):
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return Backend{}, fmt.Errorf("invalid value %q: an upstream agent is an absolute http(s) URL", v)
		}
		return Backend{Kind: BackendUpstream, URL: strings.TrimSuffix(v, "/")}, nil
	}
	return Backend{}, fmt.Errorf("invalid value %q: want demo, worker:<queue> or the http(s) URL of an upstream A2A agent", v)
}

func checkBackend(v string) (string, error) {
	b, err := ParseBackend(v)
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// Backends returns every backend the configuration routes to: the default
// one first, then those of the skills, each once.
func (c *Config) Backends() []Backend {
	seen := map[string]bool{}
	var out []Backend
	for _, v := range append([]string{c.Agent.Backend}, c.skillBackends()...) {
		if b, err := ParseBackend(v); err == nil && !seen[b.String()] {
			seen[b.String()] = true
			out = append(out, b)
		}
	}
	return out
}

func (c *Config) skillBackends() []string {
	var out []string
	for _, s := range c.Agent.Skills {
		if s.Backend != "" {
			out = append(out, s.Backend)
		}
	}
	return out
}

// checkBackends validates the skills' backends and requires worker tokens
// when some task goes to a worker queue.
func (l *loader) checkBackends() error {
	c := &l.cfg
	for i, s := range c.Agent.Skills {
		if s.MaxWait < 0 || s.MaxRun < 0 {
			return &SettingError{Key: "agent.skills", Source: l.source("agent.skills"), Err: fmt.Errorf("skill %q: max_wait and max_run must not be negative", s.ID)}
		}
		if s.Backend == "" {
			continue
		}
		b, err := ParseBackend(s.Backend)
		if err != nil {
			return &SettingError{Key: "agent.skills", Source: l.source("agent.skills"), Err: fmt.Errorf("skill %q: backend: %w", s.ID, err)}
		}
		c.Agent.Skills[i].Backend = b.String()
	}
	for _, b := range c.Backends() {
		if b.Kind == BackendWorker && len(c.WorkerTokens) == 0 {
			return &SettingError{Key: "worker_tokens", Source: l.source("worker_tokens"),
				Err: fmt.Errorf("tasks go to worker queue %q but no worker token is set: workers could not claim them", b.Queue)}
		}
	}
	return nil
}
