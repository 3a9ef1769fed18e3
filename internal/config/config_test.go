package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// envOf returns an env lookup over m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeYAML writes content to relay.yaml in a fresh temporary directory.
func writeYAML(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "relay.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// load runs Load with flags args, env and, when yaml is not empty, a YAML
// file passed with --config.
func load(t *testing.T, args []string, env map[string]string, yaml string) (Config, error) {
	t.Helper()
	if yaml != "" {
		args = append([]string{"--config", writeYAML(t, yaml)}, args...)
	}
	return Load(args, envOf(env))
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	got, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Addr: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080",
		RedisPrefix: "relay", Partitions: 16, Auth: "auto",
		Security: Security{APIKeyHeader: "X-API-Key", RateLimit: 100, AuthFailureLimit: 10, MaxStreamsPerClient: 32,
			ClientMaxStorageBytes: 32 << 20, ClientMaxTasks: 10000},
		RetryInitial: time.Second, RetryMaxInterval: 5 * time.Minute, RetryMaxAttempts: 12,
		RetryMaxElapsed: 24 * time.Hour, ReplayMaxNotifications: 1000, DeliveryTimeout: 10 * time.Second, DeliveryWorkers: 256, DeliveryPath: "outbox", DeliveryRetention: 168 * time.Hour,
		BackpressureLag: 7 * time.Millisecond, BackpressureMaxHold: time.Second,
		JWTAlg: "ES256", MaxStreams: 256, StreamKeepAlive: 15 * time.Second, StreamMaxBuffer: 256 << 10, JWTTTL: 5 * time.Minute, JWTRotateGrace: 48 * time.Hour,
		LogLevel: "info", LogFormat: "text", MaxBodyBytes: 10 << 20,
		BlockingTimeout: 30 * time.Second, ShutdownTimeout: 15 * time.Second,
		TaskRetention: 168 * time.Hour, TaskEventsMaxLen: 1000, DemoStepDelay: 100 * time.Millisecond,
		TaskMaxHistory: 100, TaskMaxArtifacts: 100, MaxMessageParts: 64, MaxMessageBytes: 2 << 20,
		DemoMaxSteps: 100, DemoMaxEventsPerSecond: 50,
		WorkerLease: 30 * time.Second, WorkerReofferAfter: 10 * time.Second, AgentOutageLimit: 2 * time.Minute, WebhookValidationTTL: 720 * time.Hour,
		WebhookStandardSignature:    "off",
		WebhookDisableAfterFailures: 50, WebhookDisableAfter: 120 * time.Hour,
		Agent: AgentConfig{
			Name: "relay demo agent", Description: "A2A relay with durable, signed, retried push notifications",
			Version: "0.1.0", CardMaxAge: 5 * time.Minute, Backend: "demo",
			Skills: []SkillConfig{{ID: "echo", Name: "Echo",
				Description: "Echoes the input text back as an artifact (built-in demo agent)",
				Tags:        []string{"demo", "echo"}, Examples: []string{"hello"}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load() =\n%+v\nwant\n%+v", got, want)
	}
}

// TestSettingsTable checks the naming rules and that every field of Config
// has exactly one setting.
func TestSettingsTable(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, s := range Settings() {
		if keys[s.Key] {
			t.Errorf("%s: listed twice", s.Key)
		}
		keys[s.Key] = true
		if s.Help == "" || s.Group == "" {
			t.Errorf("%s: no help or group", s.Key)
		}
		if s.YAMLOnly() {
			if s.Flag != "" || s.value.field == nil || !strings.Contains(s.Help, "YAML only") {
				t.Errorf("%s: YAML-only setting with a flag, no field or no mention in help", s.Key)
			}
			continue
		}
		flat := strings.ReplaceAll(s.Key, ".", "_")
		if want := "RELAY_" + strings.ToUpper(flat); s.Env != want {
			t.Errorf("%s: env %s, want %s", s.Key, s.Env, want)
		}
		if want := strings.ReplaceAll(flat, "_", "-"); s.Flag != want {
			t.Errorf("%s: flag %s, want %s", s.Key, s.Flag, want)
		}
	}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := prefix + f.Tag.Get("yaml")
			if f.Tag.Get("yaml") == ",inline" {
				walk(f.Type, prefix)
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]() {
				walk(f.Type, key+".")
			} else if !keys[key] {
				t.Errorf("field %s (%s) has no setting", f.Name, key)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		env   map[string]string
		args  []string
		check func(Config) bool
	}{
		{"yaml over default", "retry_initial: 2s\n", nil, nil,
			func(c Config) bool { return c.RetryInitial == 2*time.Second }},
		{"env over yaml", "retry_initial: 2s\n", map[string]string{"RELAY_RETRY_INITIAL": "3s"}, nil,
			func(c Config) bool { return c.RetryInitial == 3*time.Second }},
		{"flag over env", "retry_initial: 2s\n", map[string]string{"RELAY_RETRY_INITIAL": "3s"}, []string{"--retry-initial=4s"},
			func(c Config) bool { return c.RetryInitial == 4*time.Second }},
		{"unset layers keep lower", "partitions: 8\n", map[string]string{"RELAY_LOG_LEVEL": "DEBUG"}, []string{"-log-format", "json"},
			func(c Config) bool { return c.Partitions == 8 && c.LogLevel == "debug" && c.LogFormat == "json" }},
		{"nested yaml key", "agent:\n  name: mine\n", nil, nil,
			func(c Config) bool { return c.Agent.Name == "mine" && c.Agent.Version == "0.1.0" }},
		{"agent env and flag", "", map[string]string{"RELAY_AGENT_NAME": "e"}, []string{"--agent-version", "2"},
			func(c Config) bool { return c.Agent.Name == "e" && c.Agent.Version == "2" }},
		{"empty flag clears yaml list", "webhook_allow_cidrs: [10.0.0.0/8]\n", nil, []string{"--webhook-allow-cidrs="},
			func(c Config) bool { return len(c.WebhookAllowCIDRs) == 0 }},
		{"null yaml value keeps default", "addr:\nagent:\n", nil, nil,
			func(c Config) bool { return c.Addr == "127.0.0.1:8080" && c.Agent.Name == "relay demo agent" }},
		{"yaml skills replace default", "agent:\n  skills:\n    - {id: a, name: A, tags: [x]}\n", nil, nil,
			func(c Config) bool { return len(c.Agent.Skills) == 1 && c.Agent.Skills[0].ID == "a" }},
		{"extended card", "agent:\n  extended_card:\n    description: more\n    skills: [{id: s, name: S}]\n", nil, nil,
			func(c Config) bool {
				e := c.Agent.ExtendedCard
				return e != nil && e.Description == "more" && e.Skills[0].ID == "s"
			}},
		{"extended card per client", "agent:\n  extended_card:\n    skills: [{id: s, name: S}]\n    clients:\n      alice: {description: hers, skills: [{id: a, name: A}]}\n      \"jwt:https://idp.example|u1\": {skills: [{id: a, name: A}]}\n",
			map[string]string{"RELAY_API_KEYS": "alice:sha256:" + strings.Repeat("ab", 32)}, nil,
			func(c Config) bool {
				e := c.Agent.ExtendedCard
				all := e.AllSkills()
				return e.Clients["alice"].Description == "hers" && len(e.Clients["jwt:https://idp.example|u1"].Skills) == 1 &&
					len(all) == 2 && all[0].ID == "s" && all[1].ID == "a"
			}},
		{"grpc public url", "grpc_public_url: relay.example.com:8443\n", nil, nil,
			func(c Config) bool { return c.GRPCPublicURL == "relay.example.com:8443" }},
		{"task deadlines, global and per skill", "task_max_wait: 10m\nagent:\n  skills:\n    - {id: a, name: A, max_wait: 1m, max_run: 2h}\n",
			map[string]string{"RELAY_TASK_MAX_RUN": "1h"}, nil,
			func(c Config) bool {
				s := c.Agent.Skills[0]
				return c.TaskMaxWait == 10*time.Minute && c.TaskMaxRun == time.Hour && s.MaxWait == time.Minute && s.MaxRun == 2*time.Hour
			}},
		{"comments only", "# nothing\n", nil, nil,
			func(c Config) bool { return c.Addr == "127.0.0.1:8080" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, tt.args, tt.env, tt.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("unexpected config %+v", c)
			}
		})
	}
}

func TestConfigFileSource(t *testing.T) {
	t.Parallel()
	fromEnv := writeYAML(t, "partitions: 2\n")
	fromFlag := writeYAML(t, "partitions: 3\n")
	c, err := Load(nil, envOf(map[string]string{"RELAY_CONFIG": fromEnv}))
	if err != nil || c.Partitions != 2 {
		t.Errorf("RELAY_CONFIG: partitions %d, err %v", c.Partitions, err)
	}
	c, err = Load([]string{"--config", fromFlag}, envOf(map[string]string{"RELAY_CONFIG": fromEnv}))
	if err != nil || c.Partitions != 3 {
		t.Errorf("--config over RELAY_CONFIG: partitions %d, err %v", c.Partitions, err)
	}
}

// TestShippedConfig checks that configs/relay.yaml loads and states the defaults.
func TestShippedConfig(t *testing.T) {
	t.Parallel()
	got, err := Load([]string{"--config", "../../configs/relay.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Load(nil, nil)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configs/relay.yaml =\n%+v\nwant the defaults\n%+v", got, want)
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		args []string
		key  string // SettingError.Key, "" if not a SettingError
		want string // error prefix
	}{
		{"bad duration env", "", map[string]string{"RELAY_RETRY_INITIAL": "abc"}, nil,
			"retry_initial", `RELAY_RETRY_INITIAL: invalid duration "abc"`},
		{"bad duration flag", "", nil, []string{"--delivery-timeout", "10"},
			"delivery_timeout", `--delivery-timeout: invalid duration "10"`},
		{"bad duration yaml", "\nretry_initial: abc\n", nil, nil,
			"retry_initial", `relay.yaml:2: retry_initial: invalid duration "abc"`},
		{"yaml int as duration", "shutdown_timeout: 5\n", nil, nil,
			"shutdown_timeout", `relay.yaml:1: shutdown_timeout: invalid duration "5"`},
		{"zero duration", "", map[string]string{"RELAY_TASK_RETENTION": "0s"}, nil,
			"task_retention", "RELAY_TASK_RETENTION: must be positive"},
		{"negative duration", "", nil, []string{"--agent-card-max-age=-1s"},
			"agent.card_max_age", "--agent-card-max-age: must not be negative"},
		{"partitions range", "", nil, []string{"--partitions", "0"},
			"partitions", "--partitions: must be between 1 and 1024"},
		{"partitions too many", "partitions: 2048\n", nil, nil,
			"partitions", "relay.yaml:1: partitions: must be between 1 and 1024"},
		{"not an integer", "", map[string]string{"RELAY_RETRY_MAX_ATTEMPTS": "many"}, nil,
			"retry_max_attempts", `RELAY_RETRY_MAX_ATTEMPTS: invalid integer "many"`},
		{"attempts minimum", "", map[string]string{"RELAY_RETRY_MAX_ATTEMPTS": "0"}, nil,
			"retry_max_attempts", "RELAY_RETRY_MAX_ATTEMPTS: must be at least 1"},
		{"body minimum", "", map[string]string{"RELAY_MAX_BODY_BYTES": "100"}, nil,
			"max_body_bytes", "RELAY_MAX_BODY_BYTES: must be at least 1024"},
		{"events minimum", "task_events_max_len: 9\n", nil, nil,
			"task_events_max_len", "relay.yaml:1: task_events_max_len: must be at least 10"},
		{"storage budget not negative", "", map[string]string{"RELAY_CLIENT_MAX_STORAGE_BYTES": "-1"}, nil,
			"client_max_storage_bytes", "RELAY_CLIENT_MAX_STORAGE_BYTES: must be at least 0"},
		{"tasks budget not negative", "client_max_tasks: -5\n", nil, nil,
			"client_max_tasks", "relay.yaml:1: client_max_tasks: must be at least 0"},
		{"message parts range", "", nil, []string{"--max-message-parts", "0"},
			"max_message_parts", "--max-message-parts: must be between 1 and 100000"},
		{"message bytes minimum", "", map[string]string{"RELAY_MAX_MESSAGE_BYTES": "10"}, nil,
			"max_message_bytes", "RELAY_MAX_MESSAGE_BYTES: must be at least 1024"},
		{"history range", "task_max_history: 0\n", nil, nil,
			"task_max_history", "relay.yaml:1: task_max_history: must be between 1 and 100000"},
		{"artifacts range", "", map[string]string{"RELAY_TASK_MAX_ARTIFACTS": "0"}, nil,
			"task_max_artifacts", "RELAY_TASK_MAX_ARTIFACTS: must be between 1 and 100000"},
		{"demo steps range", "", map[string]string{"RELAY_DEMO_MAX_STEPS": "10001"}, nil,
			"demo_max_steps", "RELAY_DEMO_MAX_STEPS: must be between 1 and 10000"},
		{"demo rate range", "", nil, []string{"--demo-max-events-per-second", "0"},
			"demo_max_events_per_second", "--demo-max-events-per-second: must be between 1 and 10000"},
		{"auth", "", map[string]string{"RELAY_AUTH": "jwt"}, nil,
			"auth", `RELAY_AUTH: invalid value "jwt": want auto, required or none`},
		{"api key in plain text", "", map[string]string{"RELAY_API_KEYS": "alice:s3cret-key-value"}, nil,
			"api_keys", `RELAY_API_KEYS: an API key entry is <name>:sha256:`},
		{"required without credentials", "", map[string]string{"RELAY_AUTH": "required"}, nil,
			"auth", `RELAY_AUTH: auth is required but no client credentials are configured`},
		{"jwt without audience", "", map[string]string{"RELAY_CLIENT_JWT_JWKS_URL": "https://issuer.example/jwks", "RELAY_CLIENT_JWT_ISSUER": "https://issuer.example"}, nil,
			"client_jwt_issuer", `RELAY_CLIENT_JWT_ISSUER: client JWTs need both`},
		{"short secret key", "", map[string]string{"RELAY_SECRET_KEYS": "k1:c2hvcnQ="}, nil,
			"secret_keys", `RELAY_SECRET_KEYS: a secret key is <kid>:<base64 of 32 bytes>`},
		{"log level", "", nil, []string{"--log-level=trace"},
			"log_level", `--log-level: invalid value "trace": want one of debug, info, warn, error`},
		{"log format", "log_format: xml\n", nil, nil,
			"log_format", `relay.yaml:1: log_format: invalid value "xml"`},
		{"addr", "", map[string]string{"RELAY_ADDR": "8080"}, nil,
			"addr", `RELAY_ADDR: invalid address "8080"`},
		{"addr port", "", nil, []string{"--addr", ":99999"}, "addr", `--addr: invalid port "99999"`},
		{"public url", "", map[string]string{"RELAY_PUBLIC_URL": "localhost:8080"}, nil,
			"public_url", `RELAY_PUBLIC_URL: invalid URL "localhost:8080"`},
		{"public url query", "", nil, []string{"--public-url", "https://x.example/?a=b"},
			"public_url", "--public-url: invalid URL"},
		{"redis scheme", "", map[string]string{"RELAY_REDIS_URL": "http://r:6379"}, nil,
			"redis_url", `RELAY_REDIS_URL: unsupported scheme "http"`},
		{"redis url hides password", "", map[string]string{"RELAY_REDIS_URL": "redis://u:secret@/0"}, nil,
			"redis_url", `RELAY_REDIS_URL: invalid URL "redis://u:xxxxx@/0": no host`},
		{"redis addr without cluster", "", map[string]string{"RELAY_REDIS_URL": "redis://h1:6379?addr=h2:6379"}, nil,
			"redis_url", `RELAY_REDIS_URL: invalid URL "redis://h1:6379?addr=h2:6379": addr= names cluster nodes; for a cluster use redis+cluster://`},
		{"cluster node without port", "", map[string]string{"RELAY_REDIS_URL": "redis+cluster://u:secret@h1:7000,h2"}, nil,
			"redis_url", `RELAY_REDIS_URL: invalid cluster URL: node "h2": want host:port`},
		{"cluster database", "", map[string]string{"RELAY_REDIS_URL": "redis+cluster://h1:7000/1"}, nil,
			"redis_url", `RELAY_REDIS_URL: invalid cluster URL: database "1": a cluster has database 0 only`},
		{"cluster option", "", map[string]string{"RELAY_REDIS_URL": "redis+cluster://h1:7000?db=2"}, nil,
			"redis_url", `RELAY_REDIS_URL: invalid cluster URL: redis: unexpected option: db`},
		{"redis prefix", "redis_prefix: \"a{b}\"\n", nil, nil, "redis_prefix", "relay.yaml:1: redis_prefix: invalid prefix"},
		{"empty redis prefix", "", nil, []string{"--redis-prefix="}, "redis_prefix", "--redis-prefix: must not be empty"},
		{"cidr", "", map[string]string{"RELAY_WEBHOOK_ALLOW_CIDRS": "127.0.0.0/8,nope"}, nil,
			"webhook_allow_cidrs", `RELAY_WEBHOOK_ALLOW_CIDRS: invalid CIDR "nope"`},
		{"cidr in yaml list", "webhook_allow_cidrs:\n  - 10.0.0.0/33\n", nil, nil,
			"webhook_allow_cidrs", `relay.yaml:1: webhook_allow_cidrs: invalid CIDR "10.0.0.0/33"`},
		{"list of lists", "webhook_allow_cidrs: [[a]]\n", nil, nil,
			"webhook_allow_cidrs", "relay.yaml:1: webhook_allow_cidrs: line 1: want a list of single values"},
		{"scalar wanted", "addr: [a, b]\n", nil, nil, "addr", "relay.yaml:1: addr: want a single value"},
		{"empty agent name", "agent:\n  name: \"\"\n", nil, nil, "agent.name", "relay.yaml:2: agent.name: must not be empty"},
		{"agent not a map", "agent: x\n", nil, nil, "agent", "relay.yaml:1: agent: want a mapping"},
		{"retry interval below initial", "retry_max_interval: 1s\n", map[string]string{"RELAY_RETRY_INITIAL": "2s"}, nil,
			"retry_max_interval", "relay.yaml:1: retry_max_interval: 1s is less than RELAY_RETRY_INITIAL (2s)"},
		{"unknown yaml key", "retry_intial: 1s\n", nil, nil, "retry_intial", "relay.yaml:1: retry_intial: unknown key"},
		{"unknown nested key", "agent:\n  nam: x\n", nil, nil, "agent.nam", "relay.yaml:2: agent.nam: unknown key"},
		{"unknown skill key", "agent:\n  skills:\n    - id: a\n      name: A\n      tag: [x]\n", nil, nil,
			"agent.skills", "relay.yaml:5: agent.skills[0].tag: unknown key"},
		{"unknown extended card key", "agent:\n  extended_card:\n    skills: []\n    extra: 1\n", nil, nil,
			"agent.extended_card", "relay.yaml:4: agent.extended_card.extra: unknown key"},
		{"extended card for an unknown client", "agent:\n  extended_card:\n    clients:\n      mallory: {skills: []}\n", nil, nil,
			"agent.extended_card", `relay.yaml:2: agent.extended_card: clients: "mallory" is neither the name of an API key (api_keys) nor jwt:<iss>|<sub>`},
		{"client skill repeats an extended one", "agent:\n  extended_card:\n    skills: [{id: s, name: S}]\n    clients:\n      \"jwt:i|s\": {skills: [{id: s, name: T}]}\n", nil, nil,
			"agent.extended_card", `relay.yaml:2: agent.extended_card: clients: "jwt:i|s": skill id "s" appears twice`},
		{"grpc public url without host", "grpc_public_url: \":8443\"\n", nil, nil,
			"grpc_public_url", `relay.yaml:1: grpc_public_url: invalid address ":8443": want host:port`},
		{"skill type", "agent:\n  skills: {id: a}\n", nil, nil,
			"agent.skills", "relay.yaml:2: agent.skills: line 2: cannot unmarshal"},
		{"skill without id", "agent:\n  skills: [{name: A}]\n", nil, nil,
			"agent.skills", "relay.yaml:2: agent.skills: skill 0: id must not be empty"},
		{"negative skill deadline", "agent:\n  skills: [{id: a, name: A, max_run: -1s}]\n", nil, nil,
			"agent.skills", `relay.yaml:2: agent.skills: skill "a": max_wait and max_run must not be negative`},
		{"negative deadline", "task_max_wait: -1s\n", nil, nil, "task_max_wait", "relay.yaml:1: task_max_wait: must not be negative, not -1s"},
		{"duplicate skill", "agent:\n  skills: [{id: a, name: A}, {id: a, name: B}]\n", nil, nil,
			"agent.skills", `relay.yaml:2: agent.skills: skill id "a" appears twice`},
		{"key set twice", "addr: :1\naddr: :2\n", nil, nil, "addr", "relay.yaml:2: addr: set twice"},
		{"yaml syntax", "addr: [\n", nil, nil, "", "relay.yaml: yaml:"},
		{"top level list", "- a\n", nil, nil, "", "relay.yaml:1: want a mapping of settings"},
		{"two documents", "addr: :1\n---\naddr: :2\n", nil, nil, "", "relay.yaml: want exactly one YAML document"},
		{"missing file flag", "", nil, []string{"--config", "/nonexistent/relay.yaml"}, "", "--config: open /nonexistent/relay.yaml"},
		{"missing file env", "", map[string]string{"RELAY_CONFIG": "/nonexistent/r.yaml"}, nil, "", "RELAY_CONFIG: open /nonexistent/r.yaml"},
		{"unknown flag", "", nil, []string{"--retry-intial=1s"}, "", "flag provided but not defined: -retry-intial"},
		{"flag without value", "", nil, []string{"--addr"}, "", "flag needs an argument: -addr"},
		{"positional argument", "", nil, []string{"--addr", ":1", "extra"}, "", `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tt.args, tt.env, tt.yaml)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			// The file lives in a temporary directory; compare from its base name.
			msg := err.Error()
			if i := strings.Index(msg, "relay.yaml"); i >= 0 && !strings.HasPrefix(tt.want, "--config") {
				msg = msg[i:]
			}
			if !strings.HasPrefix(msg, tt.want) {
				t.Errorf("error %q, want prefix %q", msg, tt.want)
			}
			var se *SettingError
			if got := errors.As(err, &se); got != (tt.key != "") || (got && se.Key != tt.key) {
				t.Errorf("SettingError %+v, want key %q", se, tt.key)
			}
		})
	}
}

func TestPublicURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, publicURL, want string }{
		{":8080", "", "http://localhost:8080"},
		{"0.0.0.0:9000", "", "http://localhost:9000"},
		{"[::]:9000", "", "http://localhost:9000"},
		{"127.0.0.1:7000", "", "http://127.0.0.1:7000"},
		{"relay.internal:80", "", "http://relay.internal:80"},
		{"[::1]:7000", "", "http://[::1]:7000"},
		{":8080", "https://relay.example.com/", "https://relay.example.com"},
		{":8080", "https://relay.example.com/a2a//", "https://relay.example.com/a2a"},
	}
	for _, tt := range tests {
		t.Run(tt.addr+" "+tt.publicURL, func(t *testing.T) {
			t.Parallel()
			c, err := Load([]string{"--addr", tt.addr, "--public-url", tt.publicURL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.PublicURL != tt.want {
				t.Errorf("PublicURL = %q, want %q", c.PublicURL, tt.want)
			}
		})
	}
}

func TestCIDRs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, env string
		want            []string
	}{
		{"env list", "", "127.0.0.0/8, ::1 ,,", []string{"127.0.0.0/8", "::1/128"}},
		{"bare ipv4", "", "10.1.2.3", []string{"10.1.2.3/32"}},
		{"masked", "", "10.1.2.3/8", []string{"10.0.0.0/8"}},
		{"yaml sequence", "webhook_allow_cidrs: [127.0.0.1, 'fd00::/8']\n", "", []string{"127.0.0.1/32", "fd00::/8"}},
		{"yaml scalar", "webhook_allow_cidrs: 127.0.0.0/8,192.168.0.0/16\n", "", []string{"127.0.0.0/8", "192.168.0.0/16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, nil, map[string]string{"RELAY_WEBHOOK_ALLOW_CIDRS": tt.env}, tt.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.WebhookAllowCIDRs, tt.want) {
				t.Errorf("WebhookAllowCIDRs = %q, want %q", c.WebhookAllowCIDRs, tt.want)
			}
		})
	}
	for _, bad := range []string{"fe80::1%eth0", "10.0.0.0/", "300.0.0.1", "localhost"} {
		if _, err := Load([]string{"--webhook-allow-cidrs", bad}, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRepeatedListFlag(t *testing.T) {
	t.Parallel()
	c, err := Load([]string{"--webhook-allow-cidrs", "127.0.0.0/8", "--webhook-allow-cidrs", "::1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.0/8", "::1/128"}; !reflect.DeepEqual(c.WebhookAllowCIDRs, want) {
		t.Errorf("WebhookAllowCIDRs = %q, want %q", c.WebhookAllowCIDRs, want)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-h", "--help", "-help"} {
		if _, err := Load([]string{"--addr", ":1", arg}, nil); !errors.Is(err, ErrHelp) {
			t.Errorf("%s: err %v, want ErrHelp", arg, err)
		}
	}
	usage := Usage()
	for _, want := range []string{"--config", "RELAY_CONFIG", "Precedence"} {
		if !strings.Contains(usage, want) {
			t.Errorf("Usage() lacks %q", want)
		}
	}
	for _, s := range Settings() {
		for _, want := range []string{s.Key, s.Env, "--" + s.Flag} {
			if want != "--" && !strings.Contains(usage, want) {
				t.Errorf("Usage() lacks %q", want)
			}
		}
	}
}

func FuzzLoadYAML(f *testing.F) {
	seeds := []string{
		"", "addr: :1\n", "agent:\n  skills: [{id: a, name: A}]\n", "x: &a [*a]\n",
		"webhook_allow_cidrs: &c [::1]\nagent: {extended_card: {skills: *c}}\n",
		"<<: {addr: ':1'}\n", "? [a]\n: b\n", "agent: !!binary aGk=\n", "- [\n",
	}
	if data, err := os.ReadFile("../../configs/relay.yaml"); err == nil {
		seeds = append(seeds, string(data))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "relay.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load([]string{"--config", path}, nil)
		if err == nil && (c.PublicURL == "" || c.Partitions < 1 || c.RetryMaxAttempts < 1) {
			t.Errorf("accepted an invalid config: %+v", c)
		}
	})
}

// TestRedisClusterURL checks the cluster URL forms: seeds, password,
// options, TLS, and that errors never quote the password.
func TestRedisClusterURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		url            string
		addrs          []string
		user, password string
		tls            bool
	}{
		{url: "redis+cluster://127.0.0.1:7001", addrs: []string{"127.0.0.1:7001"}},
		{url: "redis+cluster://:s%40cret@h1:7001,h2:7002,[::1]:7003/?dial_timeout=2s",
			addrs: []string{"h1:7001", "h2:7002", "[::1]:7003"}, password: "s@cret"},
		{url: "rediss+cluster://relay:pw@h1:7001,h2:7002/0", addrs: []string{"h1:7001", "h2:7002"},
			user: "relay", password: "pw", tls: true},
	} {
		t.Run(tt.url, func(t *testing.T) {
			if !IsRedisClusterURL(tt.url) {
				t.Fatal("IsRedisClusterURL = false")
			}
			if _, err := checkRedisURL(tt.url); err != nil {
				t.Fatalf("checkRedisURL: %v", err)
			}
			opt, err := RedisClusterOptions(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(opt.Addrs, tt.addrs) || opt.Username != tt.user || opt.Password != tt.password ||
				(opt.TLSConfig != nil) != tt.tls {
				t.Errorf("got addrs %v user %q password %q tls %v", opt.Addrs, opt.Username, opt.Password, opt.TLSConfig != nil)
			}
		})
	}
	for _, bad := range []string{"redis+cluster://u:secret@", "redis+cluster://u:secret@h1:7001,,h2:7002",
		"redis+cluster://u:secret@h1:99999", "redis+cluster://u:secret@h1:7001?read_timeout=x", "redis+cluster://u:secret%zz@h1:1"} {
		_, err := checkRedisURL(bad)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("checkRedisURL(%q) = %v, want an error without the password", bad, err)
		}
	}
	if IsRedisClusterURL("redis://h1:6379") {
		t.Error(`IsRedisClusterURL("redis://h1:6379") = true`)
	}
}
