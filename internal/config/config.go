// Package config turns a YAML file, RELAY_* environment variables and
// command-line flags (in rising order of precedence) into one validated
// Config. Domain packages never import it: internal/app copies the fields
// they need into each package's own small config type.
package config

import (
	"maps"
	"slices"
	"time"
)

// Config is every setting relay reads. The yaml tags are the keys of the
// configuration file; Settings (settings.go) maps each one to its
// environment variable, flag, default and help text.
type Config struct {
	// Addr is the listen address of the HTTP server.
	Addr string `yaml:"addr"`
	// PublicURL is the URL clients reach relay at: the card's url and the JWT issuer.
	// Empty means derived from Addr (http://localhost:<port>).
	PublicURL string `yaml:"public_url"`
	// GRPCAddr is the listen address of the A2A gRPC server; empty: none.
	GRPCAddr string `yaml:"grpc_addr"`
	// GRPCTLSCert and GRPCTLSKey are the gRPC server's TLS certificate and
	// key files (PEM); empty: plaintext.
	GRPCTLSCert string `yaml:"grpc_tls_cert"`
	GRPCTLSKey  string `yaml:"grpc_tls_key"`
	// GRPCPublicURL is where gRPC clients reach relay (host:port): the
	// card's GRPC interface. Empty lists none.
	GRPCPublicURL string `yaml:"grpc_public_url"`

	// RedisURL names the Redis to use (redis://, rediss://, unix://, or a
	// Redis Cluster: redis+cluster://, rediss+cluster://, see
	// RedisClusterOptions). Empty runs an embedded in-process store whose
	// data does not survive a restart.
	RedisURL string `yaml:"redis_url"`
	// RedisPrefix is prepended to every key relay writes.
	RedisPrefix string `yaml:"redis_prefix"`
	// Partitions is the number of task partitions (hash slots tags). Fixed once data exists.
	Partitions int `yaml:"partitions"`

	// Auth is the client authentication mode: auto, required or none.
	Auth string `yaml:"auth"`
	// Security is client credentials, tenant limits and secrets at rest.
	Security Security `yaml:",inline"`

	// WebhookAllowCIDRs lists address ranges webhooks may target even though
	// they are private, loopback or link-local (e.g. 127.0.0.0/8 for local tests).
	WebhookAllowCIDRs []string `yaml:"webhook_allow_cidrs"`
	// WebhookAllowWideCIDRs lets WebhookAllowCIDRs hold ranges wider than a
	// private one (0.0.0.0/0, ::/0...); without it relay refuses to start.
	WebhookAllowWideCIDRs bool `yaml:"webhook_allow_wide_cidrs"`
	// WebhookValidation checks webhook URL ownership before a host's first
	// notification; a validated host stays so for WebhookValidationTTL.
	WebhookValidation    bool          `yaml:"webhook_validation"`
	WebhookValidationTTL time.Duration `yaml:"webhook_validation_ttl"`
	// WebhookStandardSignature is the Standard Webhooks signature added to
	// notifications whose push config asks for none: "off" or "v1a".
	WebhookStandardSignature string `yaml:"webhook_standard_signature"`
	// WebhookProxy, when set, is the HTTP CONNECT proxy every webhook
	// connection goes through: http://[user:password@]host:port.
	WebhookProxy string `yaml:"webhook_proxy"`
	// WebhookHostRateLimit and WebhookHostMaxConcurrent limit the
	// deliveries to each webhook host, across instances: starts per second
	// and in flight (0: no limit). A push config's own limits (relay's
	// webhook extension) hold for its URL beside them.
	WebhookHostRateLimit     float64 `yaml:"webhook_host_rate_limit"`
	WebhookHostMaxConcurrent int     `yaml:"webhook_host_max_concurrent"`
	// OperatorWebhookURL gets alerts about disabled configs and dead
	// letters (with OperatorWebhookToken as a bearer token).
	OperatorWebhookURL   string `yaml:"operator_webhook_url"`
	OperatorWebhookToken string `yaml:"operator_webhook_token"`
	// WebhookDisableAfterFailures disables a webhook endpoint after this
	// many consecutive failed attempts, WebhookDisableAfter after failing
	// this long without a success (0 turns each off).
	WebhookDisableAfterFailures int           `yaml:"webhook_disable_after_failures"`
	WebhookDisableAfter         time.Duration `yaml:"webhook_disable_after"`

	// Retry policy of webhook deliveries.
	RetryInitial     time.Duration `yaml:"retry_initial"`
	RetryMaxInterval time.Duration `yaml:"retry_max_interval"`
	RetryMaxAttempts int           `yaml:"retry_max_attempts"`
	RetryMaxElapsed  time.Duration `yaml:"retry_max_elapsed"`
	// ReplayMaxNotifications bounds the notifications one replay queues.
	ReplayMaxNotifications int `yaml:"replay_max_notifications"`
	// DeliveryTimeout bounds one webhook POST.
	DeliveryTimeout time.Duration `yaml:"delivery_timeout"`
	// DeliveryWorkers is the number of concurrent webhook POSTs per instance.
	DeliveryWorkers int `yaml:"delivery_workers"`
	// DeliveryPath is how notifications go from a commit to their first
	// attempt: "lanes" (lane tokens) or "outbox" (the partitions' outboxes).
	DeliveryPath string `yaml:"delivery_path"`
	// BackpressureLag is the delivery queue wait above which new tasks are
	// held (0: never); BackpressureMaxHold bounds how long one is held.
	BackpressureLag     time.Duration `yaml:"backpressure_lag"`
	BackpressureMaxHold time.Duration `yaml:"backpressure_max_hold"`
	// DeliveryRetention is how long delivery records and attempts are kept.
	DeliveryRetention time.Duration `yaml:"delivery_retention"`

	// JWTAlg is the notification signing algorithm: ES256, EdDSA or RS256.
	JWTAlg string `yaml:"jwt_alg"`
	// JWTKeyFile is an optional PEM private key to sign with; empty generates
	// keys once and keeps them in Redis.
	JWTKeyFile string `yaml:"jwt_key_file"`
	// JWTTTL is the lifetime of a notification JWT.
	JWTTTL time.Duration `yaml:"jwt_ttl"`
	// JWTRotateGrace is how long a rotated-out key stays in the JWKS.
	JWTRotateGrace time.Duration `yaml:"jwt_rotate_grace"`

	// LogLevel is debug, info, warn or error; LogFormat is text or json.
	LogLevel  string `yaml:"log_level"`
	LogFormat string `yaml:"log_format"`

	// MaxBodyBytes caps the size of a request body.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// BlockingTimeout bounds how long a blocking send waits for a terminal or
	// interrupted state before it returns the task as it stands.
	BlockingTimeout time.Duration `yaml:"blocking_timeout"`
	// ShutdownTimeout bounds the graceful shutdown.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// TaskRetention is how long a finished task is kept before it expires.
	TaskRetention time.Duration `yaml:"task_retention"`
	// TaskEventsMaxLen caps (approximately) each task's event stream.
	TaskEventsMaxLen int `yaml:"task_events_max_len"`
	// TaskMaxHistory is the most messages a task's history keeps.
	TaskMaxHistory int `yaml:"task_max_history"`
	// TaskMaxArtifacts is the most artifacts a task keeps.
	TaskMaxArtifacts int `yaml:"task_max_artifacts"`
	// MaxMessageParts and MaxMessageBytes bound one message a client sends.
	MaxMessageParts int `yaml:"max_message_parts"`
	MaxMessageBytes int `yaml:"max_message_bytes"`

	// MaxStreams bounds the SSE streams open at once on one instance.
	MaxStreams int `yaml:"max_streams"`
	// StreamKeepAlive is the idle time after which a stream gets a ": ping".
	StreamKeepAlive time.Duration `yaml:"stream_keepalive"`
	// StreamMaxBuffer is how many bytes of an event a stream may hold for a
	// client that is not reading before it gives the client only seconds.
	StreamMaxBuffer int `yaml:"stream_max_buffer"`

	// WorkerTokens authenticate workers of the worker API.
	WorkerTokens []string `yaml:"worker_tokens"`
	// WorkerLease is how long a worker's claim lasts without a heartbeat.
	WorkerLease time.Duration `yaml:"worker_lease"`
	// WorkerReofferAfter is how old a recorded offer that no relay made
	// must be for the leader to make it (ingest.Reofferer).
	WorkerReofferAfter time.Duration `yaml:"worker_reoffer_after"`
	// TaskMaxWait and TaskMaxRun limit each task turn: the time it waits
	// unclaimed, and runs once claimed (0: no limit); a skill's MaxWait and
	// MaxRun override them.
	TaskMaxWait time.Duration `yaml:"task_max_wait"`
	TaskMaxRun  time.Duration `yaml:"task_max_run"`
	// AgentOutageLimit is how long an in-process agent retries its writes
	// while Redis is unavailable before the task fails.
	AgentOutageLimit time.Duration `yaml:"agent_outage_limit"`

	// DemoStepDelay is the demo agent's default pause between events.
	DemoStepDelay time.Duration `yaml:"demo_step_delay"`
	// DemoMaxSteps bounds the steps (and artifact chunks) a message may ask
	// of the demo agent.
	DemoMaxSteps int `yaml:"demo_max_steps"`
	// DemoMaxEventsPerSecond paces the demo agent's events of each task.
	DemoMaxEventsPerSecond int `yaml:"demo_max_events_per_second"`

	// Agent describes the agent card.
	Agent AgentConfig `yaml:"agent"`
}

// AgentConfig is what the agent card says about the agent behind relay.
type AgentConfig struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Version     string `yaml:"version"`
	// Backend is where tasks go unless their skill has a backend of its
	// own: demo, worker:<queue>, or an upstream A2A agent's base URL.
	Backend string `yaml:"backend"`
	// CardMaxAge is the Cache-Control max-age of the agent card.
	CardMaxAge time.Duration `yaml:"card_max_age"`
	Skills     []SkillConfig `yaml:"skills"`
	// ExtendedCard, when set, is served to agent/getAuthenticatedExtendedCard
	// and GetExtendedAgentCard; when nil the first answers -32007 and the
	// second (v1.0) -32004.
	ExtendedCard *ExtendedCardConfig `yaml:"extended_card"`
}

// SkillConfig is one skill of the agent card.
type SkillConfig struct {
	ID          string   `yaml:"id"`
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Tags        []string `yaml:"tags"`
	Examples    []string `yaml:"examples"`
	// Backend, when set, takes the tasks whose first message names this
	// skill (metadata "skill"); see AgentConfig.Backend.
	Backend string `yaml:"backend,omitempty"`
	// MaxWait and MaxRun, when set, replace task_max_wait and task_max_run
	// for this skill's tasks (YAML durations such as 10m).
	MaxWait time.Duration `yaml:"max_wait,omitempty"`
	MaxRun  time.Duration `yaml:"max_run,omitempty"`
}

// ExtendedCardConfig adds to the public card for authenticated clients.
type ExtendedCardConfig struct {
	Description string        `yaml:"description"`
	Skills      []SkillConfig `yaml:"skills"`
	// Clients gives some clients an extended card of their own, keyed by
	// the client: an API key's name (RELAY_API_KEYS), or jwt:<iss>|<sub>
	// for a JWT's principal. Its description, when set, replaces
	// Description; its skills come after Skills.
	Clients map[string]ClientCardConfig `yaml:"clients"`
}

// ClientCardConfig is what one client's extended card has of its own.
type ClientCardConfig struct {
	Description string        `yaml:"description"`
	Skills      []SkillConfig `yaml:"skills"`
}

// AllSkills returns the skills of the extended cards: Skills, then each
// client's (in the order of the client names), each id once (the first
// definition of an id that several clients list counts).
func (e *ExtendedCardConfig) AllSkills() []SkillConfig {
	out := slices.Clip(e.Skills)
	seen := map[string]bool{}
	for _, s := range e.Skills {
		seen[s.ID] = true
	}
	for _, name := range slices.Sorted(maps.Keys(e.Clients)) {
		for _, s := range e.Clients[name].Skills {
			if !seen[s.ID] {
				seen[s.ID] = true
				out = append(out, s)
			}
		}
	}
	return out
}
