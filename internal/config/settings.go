package config

import "time"

// Setting describes one configuration setting: its names in each layer, its
// default and its help text. Settings returns the table; Load, Usage and the
// tests are all driven by it, so a setting exists in exactly one place.
type Setting struct {
	// Key is the YAML key; nested keys are dotted (agent.name).
	Key string
	// Env is the environment variable, or "" for a YAML-only setting.
	Env string
	// Flag is the flag name without dashes, or "" for a YAML-only setting.
	Flag string
	// Default is the default value as a user would write it.
	Default string
	// Group is the heading Usage lists the setting under.
	Group string
	// Help says what the setting does.
	Help string

	value binder
}

// YAMLOnly reports whether the setting can only be set in the YAML file.
func (s Setting) YAMLOnly() bool { return s.Env == "" }

// Groups of settings, in the order Usage lists them.
const (
	groupServer   = "Server"
	groupStorage  = "Storage"
	groupDelivery = "Webhook delivery"
	groupLog      = "Logging"
	groupAgent    = "Agent card"
	groupDemo     = "Demo agent"
	groupWorkers  = "Agent backends"
	groupSecurity = "Client authentication, limits and secrets"
)

// groups lists the groups in the order Usage prints them.
func groups() []string {
	return []string{groupServer, groupSecurity, groupStorage, groupDelivery, groupLog, groupAgent, groupWorkers, groupDemo}
}

// Settings returns the table of every setting, in a fresh slice.
func Settings() []Setting {
	return append(append(append(serverSettings(), securitySettings()...), deliverySettings()...), agentSettings()...)
}

// serverSettings are the HTTP server, storage and logging settings.
func serverSettings() []Setting {
	return []Setting{
		{Key: "addr", Env: "RELAY_ADDR", Flag: "addr", Default: "", Group: groupServer,
			Help:  "Listen address of the HTTP server (host:port). Empty: 127.0.0.1:8080 (loopback only) while client authentication is off, as in the quickstart, else :8080 (every interface).",
			value: text(func(c *Config) *string { return &c.Addr }, checkAddr)},
		{Key: "public_url", Env: "RELAY_PUBLIC_URL", Flag: "public-url", Default: "", Group: groupServer,
			Help:  "URL clients reach relay at: the agent card's url and the JWT issuer. Empty derives http://localhost:<port> from addr (or http://<host>:<port> when addr names a host).",
			value: text(func(c *Config) *string { return &c.PublicURL }, checkPublicURL)},
		{Key: "grpc_addr", Env: "RELAY_GRPC_ADDR", Flag: "grpc-addr", Default: "", Group: groupServer,
			Help:  "Listen address of the A2A gRPC server (host:port), a listener of its own beside the HTTP server's. Empty: no gRPC server.",
			value: text(func(c *Config) *string { return &c.GRPCAddr }, checkAddr)},
		{Key: "grpc_tls_cert", Env: "RELAY_GRPC_TLS_CERT", Flag: "grpc-tls-cert", Default: "", Group: groupServer,
			Help:  "PEM file of the gRPC server's TLS certificate (with grpc_tls_key). Empty: plaintext gRPC (h2c).",
			value: text(func(c *Config) *string { return &c.GRPCTLSCert }, nil)},
		{Key: "grpc_tls_key", Env: "RELAY_GRPC_TLS_KEY", Flag: "grpc-tls-key", Default: "", Group: groupServer,
			Help:  "PEM file of the gRPC server's TLS private key (with grpc_tls_cert).",
			value: text(func(c *Config) *string { return &c.GRPCTLSKey }, nil)},
		{Key: "grpc_public_url", Env: "RELAY_GRPC_PUBLIC_URL", Flag: "grpc-public-url", Default: "", Group: groupServer,
			Help:  "Where gRPC clients reach relay's gRPC listener (host:port, as a2a.proto's AgentInterface has it): the agent card lists the GRPC interface there. Empty: RELAY_PUBLIC_URL's host with RELAY_GRPC_ADDR's port. No gRPC interface is listed while RELAY_GRPC_ADDR is empty.",
			value: text(func(c *Config) *string { return &c.GRPCPublicURL }, checkHostPort)},
		{Key: "auth", Env: "RELAY_AUTH", Flag: "auth", Default: "auto", Group: groupSecurity,
			Help:  "Client authentication: auto (on when client credentials are configured; without any, the embedded store runs open and says so, and a real Redis refuses to start), required, or none (off, on purpose).",
			value: text(func(c *Config) *string { return &c.Auth }, checkAuth)},
		{Key: "max_body_bytes", Env: "RELAY_MAX_BODY_BYTES", Flag: "max-body-bytes", Default: "10485760", Group: groupServer,
			Help:  "Largest request body accepted, in bytes (at least 1024; the default is 10 MiB).",
			value: number(func(c *Config) *int { return &c.MaxBodyBytes }, 1024, 0)},
		{Key: "max_message_parts", Env: "RELAY_MAX_MESSAGE_PARTS", Flag: "max-message-parts", Default: "64", Group: groupServer,
			Help:  "Most parts a message a client sends may have (1 to 100000); more is refused with -32602 naming message.parts.",
			value: number(func(c *Config) *int { return &c.MaxMessageParts }, 1, 100000)},
		{Key: "max_message_bytes", Env: "RELAY_MAX_MESSAGE_BYTES", Flag: "max-message-bytes", Default: "2097152", Group: groupServer,
			Help:  "Most bytes a message a client sends may take as relay stores it (its JSON: parts, metadata, ids; at least 1024; the default is 2 MiB); more is refused with -32602 naming message.",
			value: number(func(c *Config) *int { return &c.MaxMessageBytes }, 1024, 0)},
		{Key: "max_streams", Env: "RELAY_MAX_STREAMS", Flag: "max-streams", Default: "256", Group: groupServer,
			Help:  "SSE streams open at once on one instance (1 to 100000); each holds a Redis connection. More are refused with an error.",
			value: number(func(c *Config) *int { return &c.MaxStreams }, 1, 100000)},
		{Key: "stream_keepalive", Env: "RELAY_STREAM_KEEPALIVE", Flag: "stream-keepalive", Default: "15s", Group: groupServer,
			Help:  "Idle time after which an SSE stream gets a keep-alive comment (which also notices clients that left).",
			value: duration(func(c *Config) *time.Duration { return &c.StreamKeepAlive }, false)},
		{Key: "stream_max_buffer", Env: "RELAY_STREAM_MAX_BUFFER", Flag: "stream-max-buffer", Default: "262144", Group: groupServer,
			Help:  "Bytes of an event an SSE stream may hold for a client that is not reading (at least 65536; the default is 256 KiB). Within it a client has 30 s to take each part of an event; of a larger event, 2 s, then relay drops it: it closes the connection, and the client resumes with Last-Event-ID.",
			value: number(func(c *Config) *int { return &c.StreamMaxBuffer }, 64<<10, 1<<30)},
		{Key: "blocking_timeout", Env: "RELAY_BLOCKING_TIMEOUT", Flag: "blocking-timeout", Default: "30s", Group: groupServer,
			Help:  "How long a blocking message/send waits for a terminal or interrupted state before returning the task as it stands.",
			value: duration(func(c *Config) *time.Duration { return &c.BlockingTimeout }, false)},
		{Key: "shutdown_timeout", Env: "RELAY_SHUTDOWN_TIMEOUT", Flag: "shutdown-timeout", Default: "15s", Group: groupServer,
			Help:  "Upper bound on a graceful shutdown.",
			value: duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout }, false)},
		{Key: "redis_url", Env: "RELAY_REDIS_URL", Flag: "redis-url", Default: "", Group: groupStorage,
			Help:  "Redis to use (redis://, rediss:// or unix://; a Redis Cluster as redis+cluster://host:port,host:port or rediss+cluster://). Empty runs an embedded in-process store whose data does not survive a restart.",
			value: text(func(c *Config) *string { return &c.RedisURL }, checkRedisURL)},
		{Key: "redis_prefix", Env: "RELAY_REDIS_PREFIX", Flag: "redis-prefix", Default: "relay", Group: groupStorage,
			Help:  "Prefix of every Redis key relay writes.",
			value: text(func(c *Config) *string { return &c.RedisPrefix }, checkRedisPrefix)},
		{Key: "partitions", Env: "RELAY_PARTITIONS", Flag: "partitions", Default: "16", Group: groupStorage,
			Help:  "Number of task partitions (1..1024). Fixed once data exists.",
			value: number(func(c *Config) *int { return &c.Partitions }, 1, 1024)},
		{Key: "task_retention", Env: "RELAY_TASK_RETENTION", Flag: "task-retention", Default: "168h", Group: groupStorage,
			Help:  "How long a finished task is kept before it expires.",
			value: duration(func(c *Config) *time.Duration { return &c.TaskRetention }, false)},
		{Key: "task_events_max_len", Env: "RELAY_TASK_EVENTS_MAX_LEN", Flag: "task-events-max-len", Default: "1000", Group: groupStorage,
			Help:  "Entries of each task's event stream kept for stream resumes (at least 10); an entry a webhook still waits on is kept too.",
			value: number(func(c *Config) *int { return &c.TaskEventsMaxLen }, 10, 0)},
		{Key: "task_max_history", Env: "RELAY_TASK_MAX_HISTORY", Flag: "task-max-history", Default: "100", Group: groupStorage,
			Help:  "Messages a task's history keeps (1 to 100000). A message beyond it is refused with -32602 naming message (start a new task in the same context); history is never cut, so that the task, its webhooks' copies and its event stream agree.",
			value: number(func(c *Config) *int { return &c.TaskMaxHistory }, 1, 100000)},
		{Key: "task_max_artifacts", Env: "RELAY_TASK_MAX_ARTIFACTS", Flag: "task-max-artifacts", Default: "100", Group: groupStorage,
			Help:  "Artifacts a task keeps (1 to 100000). An agent's event that would add another is refused (the worker API answers 400).",
			value: number(func(c *Config) *int { return &c.TaskMaxArtifacts }, 1, 100000)},
		{Key: "log_level", Env: "RELAY_LOG_LEVEL", Flag: "log-level", Default: "info", Group: groupLog,
			Help:  "Log level: debug, info, warn or error.",
			value: text(func(c *Config) *string { return &c.LogLevel }, oneOf("debug", "info", "warn", "error"))},
		{Key: "log_format", Env: "RELAY_LOG_FORMAT", Flag: "log-format", Default: "text", Group: groupLog,
			Help:  "Log format: text or json.",
			value: text(func(c *Config) *string { return &c.LogFormat }, oneOf("text", "json"))},
	}
}

// deliverySettings are the webhook delivery settings.
func deliverySettings() []Setting {
	return []Setting{
		{Key: "webhook_allow_cidrs", Env: "RELAY_WEBHOOK_ALLOW_CIDRS", Flag: "webhook-allow-cidrs", Default: "", Group: groupDelivery,
			Help:  "Address ranges webhooks may target although they are private, loopback or link-local (comma-separated in env and flags; a bare IP means that one address), e.g. 127.0.0.0/8,::1.",
			value: list(func(c *Config) *[]string { return &c.WebhookAllowCIDRs }, checkCIDR)},
		{Key: "webhook_allow_wide_cidrs", Env: "RELAY_WEBHOOK_ALLOW_WIDE_CIDRS", Flag: "webhook-allow-wide-cidrs", Default: "false", Group: groupDelivery,
			Help:  "Let webhook_allow_cidrs hold a range wider than a private one (wider than a /8 in IPv4 or fc00::/7 in IPv6, e.g. 0.0.0.0/0, ::/0, ::ffff:0:0/96). Without it such a range stops relay at start; with it relay starts and logs a warning, since webhooks may then reach every address of the range.",
			value: boolean(func(c *Config) *bool { return &c.WebhookAllowWideCIDRs })},
		{Key: "webhook_validation", Env: "RELAY_WEBHOOK_VALIDATION", Flag: "webhook-validation", Default: "false", Group: groupDelivery,
			Help:  "Check webhook URL ownership before a host's first notification: relay sends GET <url>?validationToken=<random> and the receiver must answer 2xx with the token as its body. Until it does, attempts fail with error class validation (and are retried).",
			value: boolean(func(c *Config) *bool { return &c.WebhookValidation })},
		{Key: "webhook_validation_ttl", Env: "RELAY_WEBHOOK_VALIDATION_TTL", Flag: "webhook-validation-ttl", Default: "720h", Group: groupDelivery,
			Help:  "How long a validated webhook host stays validated.",
			value: duration(func(c *Config) *time.Duration { return &c.WebhookValidationTTL }, false)},
		{Key: "webhook_standard_signature", Env: "RELAY_WEBHOOK_STANDARD_SIGNATURE", Flag: "webhook-standard-signature", Default: "off", Group: groupDelivery,
			Help:  "Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) on every notification whose push config asks for none: off, or v1a (ed25519 under relay's published keys, /.well-known/standard-webhooks.json). A config's own choice (v1 with its secret, or v1a) always applies.",
			value: text(func(c *Config) *string { return &c.WebhookStandardSignature }, checkStandardSignature)},
		{Key: "webhook_proxy", Env: "RELAY_WEBHOOK_PROXY", Flag: "webhook-proxy", Default: "", Group: groupDelivery,
			Help:  "HTTP CONNECT proxy for every webhook connection (http://[user:password@]host:port), so that webhooks leave from its fixed addresses. relay still resolves and checks each webhook address itself and asks the proxy for that IP:port; TLS runs end to end through the tunnel.",
			value: text(func(c *Config) *string { return &c.WebhookProxy }, checkProxyURL)},
		{Key: "operator_webhook_url", Env: "RELAY_OPERATOR_WEBHOOK_URL", Flag: "operator-webhook-url", Default: "", Group: groupDelivery,
			Help:  "URL that gets a JSON alert: config.disabled (a webhook answered 410), delivery.dead (a notification's retries are exhausted), endpoint.failing (an endpoint's first failure, or its first after a success; at most once an hour per endpoint) and endpoint.disabled. Empty: no alerts.",
			value: text(func(c *Config) *string { return &c.OperatorWebhookURL }, checkOptionalURL)},
		{Key: "operator_webhook_token", Env: "RELAY_OPERATOR_WEBHOOK_TOKEN", Flag: "operator-webhook-token", Default: "", Group: groupDelivery,
			Help:  "Sent as Authorization: Bearer <token> with operator alerts.",
			value: text(func(c *Config) *string { return &c.OperatorWebhookToken }, nil)},
		{Key: "webhook_disable_after_failures", Env: "RELAY_WEBHOOK_DISABLE_AFTER_FAILURES", Flag: "webhook-disable-after-failures", Default: "50", Group: groupDelivery,
			Help:  "Disable a webhook endpoint (a URL, across the push configs that name it) after this many consecutive failed attempts: its notifications are then skipped, not POSTed, until an operator enables it again (0: never by count).",
			value: number(func(c *Config) *int { return &c.WebhookDisableAfterFailures }, 0, 0)},
		{Key: "webhook_disable_after", Env: "RELAY_WEBHOOK_DISABLE_AFTER", Flag: "webhook-disable-after", Default: "120h", Group: groupDelivery,
			Help:  "Disable a webhook endpoint that has failed for this long without a single success (0: never by time).",
			value: duration(func(c *Config) *time.Duration { return &c.WebhookDisableAfter }, true)},
		{Key: "retry_initial", Env: "RELAY_RETRY_INITIAL", Flag: "retry-initial", Default: "1s", Group: groupDelivery,
			Help:  "Delay before the first retry of a failed delivery.",
			value: duration(func(c *Config) *time.Duration { return &c.RetryInitial }, false)},
		{Key: "retry_max_interval", Env: "RELAY_RETRY_MAX_INTERVAL", Flag: "retry-max-interval", Default: "5m", Group: groupDelivery,
			Help:  "Longest delay between two retries (not less than retry_initial).",
			value: duration(func(c *Config) *time.Duration { return &c.RetryMaxInterval }, false)},
		{Key: "retry_max_attempts", Env: "RELAY_RETRY_MAX_ATTEMPTS", Flag: "retry-max-attempts", Default: "12", Group: groupDelivery,
			Help:  "Attempts per notification before it goes to dead letters (at least 1).",
			value: number(func(c *Config) *int { return &c.RetryMaxAttempts }, 1, 0)},
		{Key: "retry_max_elapsed", Env: "RELAY_RETRY_MAX_ELAPSED", Flag: "retry-max-elapsed", Default: "24h", Group: groupDelivery,
			Help:  "Time after the first attempt past which a notification goes to dead letters.",
			value: duration(func(c *Config) *time.Duration { return &c.RetryMaxElapsed }, false)},
		{Key: "webhook_host_rate_limit", Env: "RELAY_WEBHOOK_HOST_RATE_LIMIT", Flag: "webhook-host-rate-limit", Default: "0", Group: groupDelivery,
			Help:  "Deliveries started per second to each webhook host (host:port), across instances, 0 to 10000 (0: no limit). Deliveries over it wait in order, not counted as attempts. A push config's own rateLimit (webhook extension) holds for its URL beside it.",
			value: rate(func(c *Config) *float64 { return &c.WebhookHostRateLimit }, 10000)},
		{Key: "webhook_host_max_concurrent", Env: "RELAY_WEBHOOK_HOST_MAX_CONCURRENT", Flag: "webhook-host-max-concurrent", Default: "0", Group: groupDelivery,
			Help:  "Deliveries in flight to each webhook host, across instances, 0 to 100000 (0: no limit). A push config's own maxConcurrent holds for its URL beside it.",
			value: number(func(c *Config) *int { return &c.WebhookHostMaxConcurrent }, 0, 100000)},
		{Key: "delivery_timeout", Env: "RELAY_DELIVERY_TIMEOUT", Flag: "delivery-timeout", Default: "10s", Group: groupDelivery,
			Help:  "Upper bound on one webhook POST.",
			value: duration(func(c *Config) *time.Duration { return &c.DeliveryTimeout }, false)},
		{Key: "delivery_workers", Env: "RELAY_DELIVERY_WORKERS", Flag: "delivery-workers", Default: "256", Group: groupDelivery,
			Help:  "Concurrent webhook POSTs per instance (1 to 4096).",
			value: number(func(c *Config) *int { return &c.DeliveryWorkers }, 1, 4096)},
		{Key: "delivery_path", Env: "RELAY_DELIVERY_PATH", Flag: "delivery-path", Default: "outbox", Group: groupDelivery,
			Help:  "How a notification reaches its first attempt: outbox (one relay owns each partition's outbox and delivers in order from it, with half the Redis commands; failed notifications are retried through the lanes) or lanes (the previous path: a token per lane). Every instance should use the same: a relay on either path delivers what the other left when it starts, but order per webhook is not kept across a switch while relays of both paths commit.",
			value: text(func(c *Config) *string { return &c.DeliveryPath }, oneOf("lanes", "outbox"))},
		{Key: "backpressure_lag", Env: "RELAY_BACKPRESSURE_LAG", Flag: "backpressure-lag", Default: "7ms", Group: groupDelivery,
			Help:  "Queue wait of webhook deliveries above which new tasks are held back until delivery catches up, and after a hold paced for a while (0 turns backpressure off). Updates to existing tasks are never held.",
			value: duration(func(c *Config) *time.Duration { return &c.BackpressureLag }, true)},
		{Key: "backpressure_max_hold", Env: "RELAY_BACKPRESSURE_MAX_HOLD", Flag: "backpressure-max-hold", Default: "1s", Group: groupDelivery,
			Help:  "Longest a new task is held by backpressure; then it is admitted anyway.",
			value: duration(func(c *Config) *time.Duration { return &c.BackpressureMaxHold }, true)},
		{Key: "replay_max_notifications", Env: "RELAY_REPLAY_MAX_NOTIFICATIONS", Flag: "replay-max-notifications", Default: "1000", Group: groupDelivery,
			Help:  "Most notifications one replay (POST /v1/deliveries/replay) queues again (1..100000); a replay that would queue more stops there and says so.",
			value: number(func(c *Config) *int { return &c.ReplayMaxNotifications }, 1, 100000)},
		{Key: "delivery_retention", Env: "RELAY_DELIVERY_RETENTION", Flag: "delivery-retention", Default: "168h", Group: groupDelivery,
			Help:  "How long delivery records and their attempts are kept.",
			value: duration(func(c *Config) *time.Duration { return &c.DeliveryRetention }, false)},
		{Key: "jwt_alg", Env: "RELAY_JWT_ALG", Flag: "jwt-alg", Default: "ES256", Group: groupDelivery,
			Help:  "Algorithm of the JWT that signs each notification: ES256, EdDSA or RS256.",
			value: text(func(c *Config) *string { return &c.JWTAlg }, checkJWTAlg)},
		{Key: "jwt_key_file", Env: "RELAY_JWT_KEY_FILE", Flag: "jwt-key-file", Default: "", Group: groupDelivery,
			Help:  "PEM private key to sign notifications with. Empty: relay generates keys once and keeps them in Redis, shared by every instance.",
			value: text(func(c *Config) *string { return &c.JWTKeyFile }, nil)},
		{Key: "jwt_ttl", Env: "RELAY_JWT_TTL", Flag: "jwt-ttl", Default: "5m", Group: groupDelivery,
			Help:  "Lifetime (exp - iat) of a notification JWT.",
			value: duration(func(c *Config) *time.Duration { return &c.JWTTTL }, false)},
		{Key: "jwt_rotate_grace", Env: "RELAY_JWT_ROTATE_GRACE", Flag: "jwt-rotate-grace", Default: "48h", Group: groupDelivery,
			Help:  "How long a rotated-out signing key stays published in /.well-known/jwks.json.",
			value: duration(func(c *Config) *time.Duration { return &c.JWTRotateGrace }, false)},
	}
}

// agentSettings describe the agent card and the demo agent.
func agentSettings() []Setting {
	return []Setting{
		{Key: "agent.name", Env: "RELAY_AGENT_NAME", Flag: "agent-name", Default: "relay demo agent", Group: groupAgent,
			Help:  "Agent name on the agent card.",
			value: text(func(c *Config) *string { return &c.Agent.Name }, required)},
		{Key: "agent.description", Env: "RELAY_AGENT_DESCRIPTION", Flag: "agent-description", Default: "A2A relay with durable, signed, retried push notifications", Group: groupAgent,
			Help:  "Agent description on the agent card.",
			value: text(func(c *Config) *string { return &c.Agent.Description }, nil)},
		{Key: "agent.version", Env: "RELAY_AGENT_VERSION", Flag: "agent-version", Default: "0.1.0", Group: groupAgent,
			Help:  "Agent version on the agent card.",
			value: text(func(c *Config) *string { return &c.Agent.Version }, required)},
		{Key: "agent.backend", Env: "RELAY_AGENT_BACKEND", Flag: "agent-backend", Default: "demo", Group: groupAgent,
			Help:  "Where tasks are worked on: demo (the built-in demo agent), worker:<queue> (workers claim them over the worker API) or the base URL of an upstream A2A agent relay fronts. A skill can name a backend of its own (agent.skills[].backend); a message picks its skill with metadata {\"skill\": \"<id>\"}.",
			value: text(func(c *Config) *string { return &c.Agent.Backend }, checkBackend)},
		{Key: "agent.card_max_age", Env: "RELAY_AGENT_CARD_MAX_AGE", Flag: "agent-card-max-age", Default: "5m", Group: groupAgent,
			Help:  "Cache-Control max-age of the agent card (0 disables caching).",
			value: duration(func(c *Config) *time.Duration { return &c.Agent.CardMaxAge }, true)},
		{Key: "agent.skills", Default: `one skill, "echo"`, Group: groupAgent,
			Help:  "Skills on the agent card: a list of {id, name, description, tags, examples, backend}. YAML only.",
			value: yamlOnly(func(c *Config) any { return &c.Agent.Skills })},
		{Key: "agent.extended_card", Default: "none", Group: groupAgent,
			Help:  "What authenticated clients see in addition to the public card: {description, skills, clients}; clients maps an API key's name (or jwt:<iss>|<sub>) to {description, skills} that client sees in addition. Unset, v0.3's extended-card method answers -32007 and v1.0's -32004. YAML only.",
			value: yamlOnly(func(c *Config) any { return &c.Agent.ExtendedCard })},
		{Key: "worker_tokens", Env: "RELAY_WORKER_TOKENS", Flag: "worker-tokens", Default: "", Group: groupWorkers,
			Help:  "Tokens workers authenticate with (Authorization: Bearer <token>; comma-separated in env and flags). Required when a backend is a worker queue. They are not client credentials.",
			value: list(func(c *Config) *[]string { return &c.WorkerTokens }, checkToken)},
		{Key: "worker_lease", Env: "RELAY_WORKER_LEASE", Flag: "worker-lease", Default: "30s", Group: groupWorkers,
			Help:  "How long a worker's claim on a task lasts without a heartbeat; then another worker gets the task.",
			value: duration(func(c *Config) *time.Duration { return &c.WorkerLease }, false)},
		{Key: "worker_reoffer_after", Env: "RELAY_WORKER_REOFFER_AFTER", Flag: "worker-reoffer-after", Default: "10s", Group: groupWorkers,
			Help:  "How long after its commit a queued task turn that no relay offered to its queue (the relay died in between) is offered by another; the leader looks every quarter of it.",
			value: duration(func(c *Config) *time.Duration { return &c.WorkerReofferAfter }, false)},
		{Key: "task_max_wait", Env: "RELAY_TASK_MAX_WAIT", Flag: "task-max-wait", Default: "0", Group: groupWorkers,
			Help:  "Longest a task turn (its creation, or a client's answer to input-required) may wait unclaimed by its agent; past it the task fails with a status message saying so. 0: no limit. A skill's max_wait overrides it.",
			value: duration(func(c *Config) *time.Duration { return &c.TaskMaxWait }, true)},
		{Key: "task_max_run", Env: "RELAY_TASK_MAX_RUN", Flag: "task-max-run", Default: "0", Group: groupWorkers,
			Help:  "Longest a task turn may run from its claim to a final or interrupted state; past it the task fails with a status message saying so, and its worker is told to stop (canceled on its next heartbeat). 0: no limit. A skill's max_run overrides it.",
			value: duration(func(c *Config) *time.Duration { return &c.TaskMaxRun }, true)},
		{Key: "agent_outage_limit", Env: "RELAY_AGENT_OUTAGE_LIMIT", Flag: "agent-outage-limit", Default: "2m", Group: groupWorkers,
			Help:  "How long an in-process agent (the demo agent, an upstream bridge) keeps retrying a write while Redis is unreachable or loading, its task paused; past it the task fails with a status message saying why, as soon as Redis answers.",
			value: duration(func(c *Config) *time.Duration { return &c.AgentOutageLimit }, false)},
		{Key: "demo_step_delay", Env: "RELAY_DEMO_STEP_DELAY", Flag: "demo-step-delay", Default: "100ms", Group: groupDemo,
			Help:  "The built-in demo agent's default pause between the events of a task (0 for none).",
			value: duration(func(c *Config) *time.Duration { return &c.DemoStepDelay }, true)},
		{Key: "demo_max_steps", Env: "RELAY_DEMO_MAX_STEPS", Flag: "demo-max-steps", Default: "100", Group: groupDemo,
			Help:  "Most steps (metadata.demo.steps) and artifact chunks (metadata.demo.artifactChunks) a message may ask of the demo agent (1 to 10000); more is refused with -32602.",
			value: number(func(c *Config) *int { return &c.DemoMaxSteps }, 1, 10000)},
		{Key: "demo_max_events_per_second", Env: "RELAY_DEMO_MAX_EVENTS_PER_SECOND", Flag: "demo-max-events-per-second", Default: "50", Group: groupDemo,
			Help:  "Events per second the demo agent emits for one task at most (1 to 10000): a shorter metadata.demo.delayMs, 0 included, is stretched to fit.",
			value: number(func(c *Config) *int { return &c.DemoMaxEventsPerSecond }, 1, 10000)},
	}
}

// defaultSkills is the value of agent.skills when the YAML file sets none.
func defaultSkills() []SkillConfig {
	return []SkillConfig{{
		ID:          "echo",
		Name:        "Echo",
		Description: "Echoes the input text back as an artifact (built-in demo agent)",
		Tags:        []string{"demo", "echo"},
		Examples:    []string{"hello"},
	}}
}
