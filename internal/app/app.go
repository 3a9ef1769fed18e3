// Package app wires relay together: it builds every component from a
// config.Config, starts them, and stops them in reverse order.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/a2a/grpcbind"
	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/a2a/rest"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/backpressure"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/delivery"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/ingest/upstream"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/leader"
	"github.com/a2arelay/relay/internal/metrics"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/ratelimit"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/telemetry"
	"github.com/a2arelay/relay/internal/throttle"
	"github.com/a2arelay/relay/internal/workqueue"

	"github.com/a2arelay/relay/internal/secrets"
	"github.com/a2arelay/relay/internal/ssrf"
	"github.com/a2arelay/relay/internal/workerapi"
)

// App is one relay instance.
type App struct {
	cfg config.Config
	log *slog.Logger
	// version is sent as User-Agent relay/<version>.
	version string

	embedded *miniredis.Miniredis
	rdb      redis.UniversalClient
	// streamRDB is the pool of blocked SSE readers, kept apart from rdb.
	streamRDB redis.UniversalClient
	// batch is the group-commit batcher of rdb that the task store, the
	// outbox and the work queues share.
	batch *groupcommit.Batcher
	// endpoint runs the A2A operations for every binding.
	endpoint *a2a.Endpoint
	streams  *ingest.Streams
	layout   layout.Keys
	store    *taskstore.Store
	// hosts are the webhook hosts that passed URL validation.
	hosts *taskstore.HostValidations
	// urls lists push configs under their webhook URLs.
	urls *taskstore.URLIndex
	// turns keeps the claims, deadlines and offers of task turns.
	turns *taskstore.Turns
	// compaction cuts the task streams back (the Compactor's).
	compaction *taskstore.Compaction
	// outboxes are the partitions' outboxes, as their owners work them.
	outboxes *outbox.Outboxes
	// stats counts delivery outcomes per minute and reads the backlog.
	stats *outbox.Stats
	// lanes hand out the delivery tokens (the Consumer's).
	lanes *outbox.Lanes
	// owners keep who owns each partition's outbox (the Consumer's).
	owners *outbox.Owners
	// replays reads task event streams and queues their notifications again.
	replays *outbox.Replay
	// records are the delivery records the operator API reads.
	records *outbox.Records
	leases  *leader.Leases
	// throttle keeps the webhooks' delivery limits.
	throttle *throttle.Throttle
	demo     *ingest.Demo
	// demoRouted: some task goes to the demo agent, so its runner works
	// the demo's queue.
	demoRouted bool
	pull       *ingest.Pull
	claims     *workqueue.Claims
	// bridges work on the tasks of upstream agents; upstream maps their
	// queues to the backends routed to.
	bridges   []*upstream.Bridge
	upstream  map[string]ingest.Agent
	workerAPI *workerapi.API
	keys      *auth.Keys
	swhKeys   *auth.Keys // the Standard Webhooks v1a (ed25519) keys
	// Client authentication: clients verifies credentials when authOn;
	// adminTokens (SHA-256) guard the management API; limiter is the
	// per-client rate limit (nil: none).
	clients     *auth.Clients
	authOn      bool
	adminTokens auth.Tokens
	limiter     *ratelimit.Limiter
	// strikes refuses remote addresses that fail authentication too often;
	// authLog samples the log of failures.
	strikes *ratelimit.Strikes
	authLog authFailureLog
	// ring seals push config secrets and signing keys at rest (nil: off).
	ring *secrets.Ring
	// resolver, when set before Start, resolves webhook hosts instead of
	// the system's resolver (tests that must not send DNS queries).
	resolver ssrf.Resolver
	// metrics is what /metrics serves.
	metrics *metrics.Metrics
	// stopBackground stops the delivery workers and the key refresher;
	// background is done when they have returned.
	stopBackground context.CancelFunc
	background     chan struct{}
	http           *fiber.App
	quiet          *quietConns // the server's connections that have sent nothing yet
	ln             net.Listener
	served         chan error
	// grpc is the A2A gRPC server (nil: RELAY_GRPC_ADDR is empty).
	grpc *grpcbind.Server
	// tracer exports spans over OTLP (nil: the OTEL_* variables ask for
	// none).
	tracer *telemetry.Tracer
}

// Deps are what an App is given rather than configured with.
type Deps struct {
	// Log is where the App logs (required).
	Log *slog.Logger
	// Version is the version relay reports (User-Agent relay/<version>,
	// the traces' service version; default "dev").
	Version string
}

// New returns an App for cfg. It connects to nothing until Start.
func New(d Deps, cfg config.Config) (*App, error) {
	if d.Log == nil {
		return nil, errors.New("app: nil logger")
	}
	return &App{cfg: cfg, log: d.Log, version: cmp.Or(d.Version, "dev")}, nil
}

// Run starts the app, serves until ctx is cancelled, then shuts down.
func (a *App) Run(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		a.closeStore()
		return err
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	return a.Shutdown(sctx)
}

// Start connects to Redis, builds every component and starts listening.
// It returns once relay accepts connections; when it fails, it undoes what
// it started (background loops, Redis connections).
func (a *App) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			if a.grpc != nil {
				_ = a.grpc.Shutdown(context.Background()) // nothing was served yet: it stops at once
				a.grpc = nil
			}
			if a.demo != nil {
				a.demo.Close()
			}
			a.stopBackgroundLoops()
			a.closeStore()
			_ = a.stopTracing(context.Background())
		}
	}()
	if err := a.startTracing(ctx); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if err := a.openStore(ctx); err != nil {
		return err
	}
	if err := a.setupSecurity(ctx); err != nil {
		return err
	}
	proxy, err := a.webhookProxy()
	if err != nil {
		return err
	}
	guard, err := ssrf.NewGuard(a.cfg.WebhookAllowCIDRs, ssrf.WithResolver(a.resolver), ssrf.WithProxy(proxy))
	if err != nil {
		return fmt.Errorf("app: RELAY_WEBHOOK_ALLOW_CIDRS: %w", err)
	}
	if err := a.checkAllowlist(ctx, guard); err != nil {
		return err
	}
	a.keys, err = auth.NewKeys(ctx, a.rdb, auth.KeyConfig{Algorithm: a.cfg.JWTAlg, KeyFile: a.cfg.JWTKeyFile,
		Grace: a.cfg.JWTRotateGrace, Prefix: a.cfg.RedisPrefix, Sealer: a.sealer()}, nil)
	if err != nil {
		return fmt.Errorf("app: signing keys: %w", err)
	}
	a.swhKeys, err = auth.NewKeys(ctx, a.rdb, auth.KeyConfig{StandardWebhooks: true, Grace: a.cfg.JWTRotateGrace,
		Prefix: a.cfg.RedisPrefix, Sealer: a.sealer()}, nil)
	if err != nil {
		return fmt.Errorf("app: Standard Webhooks keys: %w", err)
	}
	hub := ingest.NewHub()
	commit, err := ingest.NewCommitter(ingest.CommitterDeps{Store: a.store, Turns: a.turns, URLs: a.urls, Hub: hub, Observe: a.metrics.Committed, Tracer: a.tracer},
		ingest.CommitterConfig{Retention: a.cfg.TaskRetention, Limits: ingest.TaskLimits{MaxHistory: a.cfg.TaskMaxHistory,
			MaxArtifacts: a.cfg.TaskMaxArtifacts, Turn: taskstore.TurnLimits{Wait: a.cfg.TaskMaxWait, Run: a.cfg.TaskMaxRun},
			SkillTurn: a.skillTurns()}})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	router, err := a.agents(commit)
	if err != nil {
		return err
	}
	pressure, err := backpressure.New(backpressure.Deps{},
		backpressure.Config{Target: a.cfg.BackpressureLag, MaxHold: a.cfg.BackpressureMaxHold})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	svc, err := ingest.NewService(ingest.ServiceDeps{Store: a.store, Commit: commit, Hub: hub, Agent: router, Log: a.log},
		ingest.Config{BlockingTimeout: a.cfg.BlockingTimeout, CheckURL: guard.CheckURL, Gate: heldGate{pressure, a.metrics},
			Secrets: a.ring, Message: a2a.MessageLimits{MaxParts: a.cfg.MaxMessageParts, MaxBytes: a.cfg.MaxMessageBytes},
			Quota: a.quota(), Outage: a.outage()})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	card, err := a2a.NewSignedCard(a2a.CardDeps{Signer: cardSigner{a.keys}}, a.cardConfig())
	if err != nil {
		return fmt.Errorf("app: agent card: %w", err)
	}
	// The delivery workers consume the outbox as one consumer, which decides
	// the lease timing: its lane lease follows the delivery timeout.
	consumer, err := outbox.NewConsumer(outbox.ConsumerDeps{Outboxes: a.outboxes, Lanes: a.lanes, Owners: a.owners, Stats: a.stats, Records: a.records}, outbox.ConsumerConfig{Name: "relay-" + uuid.NewString(), Attempt: a.cfg.DeliveryTimeout})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	endpoints, err := health.New(a.rdb, a.layout, health.Config{DisableAfterFailures: a.cfg.WebhookDisableAfterFailures,
		DisableAfter: a.cfg.WebhookDisableAfter, ConfigKeep: max(a.cfg.TaskRetention, a.cfg.DeliveryRetention)})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	deps := delivery.Deps{Queue: consumer, Tasks: a.store, Leader: a.leases, Signer: a.keys, Dial: guard.DialContext, Log: a.log,
		Pressure: pressure, Observer: a.metrics, StandardKeys: a.swhKeys, Throttle: a.throttle, Health: endpoints, Tracer: a.tracer}
	if a.cfg.OperatorWebhookURL != "" {
		if deps.Operator, err = delivery.NewOperator(delivery.OperatorDeps{Log: a.log},
			delivery.OperatorConfig{URL: a.cfg.OperatorWebhookURL, Token: a.cfg.OperatorWebhookToken}); err != nil {
			return fmt.Errorf("app: RELAY_OPERATOR_WEBHOOK_URL: %w", err)
		}
	}
	if a.cfg.WebhookValidation {
		if deps.Validator, err = delivery.NewValidator(delivery.ValidatorDeps{Store: a.hosts, Transport: guard.Transport()},
			delivery.ValidatorConfig{Timeout: a.cfg.DeliveryTimeout, TTL: a.cfg.WebhookValidationTTL}); err != nil {
			return fmt.Errorf("app: %w", err)
		}
	}
	workers, err := delivery.New(deps, a.deliveryConfig())
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	holder := "relay-" + uuid.NewString()
	reoffer, err := ingest.NewReofferer(ingest.ReoffererDeps{Store: a.turns, Queue: a.claims, Leader: a.leases,
		Holder: holder, Log: a.log}, ingest.ReoffererConfig{After: a.cfg.WorkerReofferAfter})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	sweeper, err := ingest.NewDeadlineSweeper(ingest.DeadlineSweeperDeps{Store: a.turns, Commit: commit, Leader: a.leases,
		Holder: holder, Log: a.log}, ingest.DeadlineSweeperConfig{})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	compactor, err := ingest.NewCompactor(ingest.CompactorDeps{Store: a.compaction, Leader: a.leases, Holder: holder, Log: a.log},
		ingest.CompactorConfig{})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.startBackground(workers, compactor, reoffer, sweeper)
	if a.streams, err = ingest.NewStreams(ingest.StreamsDeps{Store: a.store, RDB: a.streamRDB},
		ingest.StreamsConfig{Max: a.cfg.MaxStreams, PerOwner: a.cfg.Security.MaxStreamsPerClient}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.endpoint, err = a2a.NewEndpoint(a2a.EndpointDeps{Service: svc, Card: card, Streams: a.streams, Log: a.log},
		a2a.StreamConfig{KeepAlive: a.cfg.StreamKeepAlive, MaxBuffer: a.cfg.StreamMaxBuffer}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	rpc, err := jsonrpc.New(jsonrpc.Deps{Endpoint: a.endpoint, Log: a.log,
		Observe: func(method string, d a2a.Dialect, code int) { a.metrics.Request(method, string(d), code) }})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.metrics.WatchQueue(a.stats, a.streams.Open, a.log)
	if a.workerAPI, err = workerapi.New(workerapi.Deps{Pull: a.pull, Log: a.log},
		workerapi.Config{Tokens: a.cfg.WorkerTokens, MaxWaiting: maxClaims}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	rh, err := rest.New(rest.Deps{Endpoint: a.endpoint, Log: a.log, Observe: func(method string, d a2a.Dialect, e *a2a.Error) {
		code := 0
		if e != nil {
			code = jsonrpc.Code(e.Kind) // the metric counts outcomes by their JSON-RPC codes, whatever the binding
		}
		a.metrics.Request(method, string(d), code)
	}})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if err := a.startGRPC(ctx); err != nil {
		return err
	}
	replay, err := delivery.NewReplayer(delivery.ReplayerDeps{Events: a.replays, Configs: a.store, URLs: a.urls}, delivery.ReplayConfig{MaxNotifications: a.cfg.ReplayMaxNotifications, Observer: a.metrics})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.http = a.newHTTP(rpc, rh, card, delivery.NewAPI(a.records, a.stats, replay), delivery.NewEndpointsAPI(endpoints))
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("app: listen on %s: %w", a.cfg.Addr, err)
	}
	a.ln = ln
	a.served = make(chan error, 1)
	a.quiet = newQuietConns()
	go func() { a.served <- a.http.Listener(a.quiet.listen(ln)) }()
	a.log.InfoContext(ctx, "relay listening", "addr", ln.Addr().String(), "public_url", a.cfg.PublicURL,
		"auth", a.cfg.Auth, "partitions", a.store.Partitions())
	a.hintLoopback(ctx, ln.Addr())
	return nil
}

// Addr is the address relay listens on (useful with port 0).
func (a *App) Addr() string { return a.ln.Addr().String() }

// GRPCAddr is the address the gRPC server listens on ("": none).
func (a *App) GRPCAddr() string {
	if a.grpc == nil {
		return ""
	}
	return a.grpc.Addr()
}

// startGRPC starts the A2A gRPC server when RELAY_GRPC_ADDR is set: the
// same Endpoint, guard and metrics as the HTTP bindings, on a listener of
// its own (fasthttp has no HTTP/2).
func (a *App) startGRPC(ctx context.Context) error {
	if a.cfg.GRPCAddr == "" {
		return nil
	}
	gs, err := grpcbind.New(grpcbind.Deps{Endpoint: a.endpoint, Guard: grpcGuard{a}, Log: a.log, Tracer: a.tracer,
		Observe: func(method string, e *a2a.Error) {
			code := 0
			if e != nil {
				code = jsonrpc.Code(e.Kind) // the metric counts outcomes by their JSON-RPC codes, whatever the binding
			}
			a.metrics.Request(method, string(a2a.V10), code)
		}},
		grpcbind.Config{Addr: a.cfg.GRPCAddr, TLSCert: a.cfg.GRPCTLSCert, TLSKey: a.cfg.GRPCTLSKey, MaxRecvBytes: a.cfg.MaxBodyBytes})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if err := gs.Start(); err != nil {
		return fmt.Errorf("app: RELAY_GRPC_ADDR: %w", err)
	}
	a.grpc = gs
	a.log.InfoContext(ctx, "relay gRPC listening", "addr", gs.Addr(), "tls", a.cfg.GRPCTLSCert != "")
	return nil
}

// Shutdown stops taking requests, lets in-flight ones finish, stops the
// agent's work, and closes Redis, in that order.
func (a *App) Shutdown(ctx context.Context) error {
	var errs []error
	if a.http != nil {
		a.endpoint.CloseStreams() // open streams end; their clients resume elsewhere
		a.workerAPI.Close()       // waiting claims end; their workers claim again
		// Both bindings stop taking calls at once, and share the time
		// left for those under way to end.
		grpcDone := make(chan error, 1)
		go func() {
			if a.grpc == nil {
				grpcDone <- nil
				return
			}
			grpcDone <- a.grpc.Shutdown(ctx)
		}()
		errs = append(errs, a.shutdownHTTP(ctx), <-grpcDone)
		// fasthttp misses a listener it had not started serving yet: close it
		// here too so that Serve always returns.
		_ = a.ln.Close()
		if err := <-a.served; err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if a.demo != nil {
		a.demo.Close()
	}
	a.stopBackgroundLoops()
	a.closeStore()
	errs = append(errs, a.stopTracing(ctx))
	a.log.InfoContext(ctx, "relay stopped")
	return errors.Join(errs...)
}

// shutdownHTTP stops the server gracefully: requests under way end, and
// fasthttp closes connections between requests; connections that have
// sent nothing yet are closed here as the shutdown goes (fasthttp would
// wait for their first request, up to the read timeout).
func (a *App) shutdownHTTP(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- a.http.ShutdownWithContext(ctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		a.quiet.closeAll()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}

// openStore connects to the configured Redis, or starts the embedded one.
func (a *App) openStore(ctx context.Context) error {
	if a.cfg.RedisURL == "" {
		m, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("app: start embedded store: %w", err)
		}
		a.embedded = m
		a.rdb = redis.NewClient(&redis.Options{Addr: m.Addr(), PoolSize: a.poolSize()})
		a.streamRDB = redis.NewClient(&redis.Options{Addr: m.Addr(), PoolSize: a.cfg.MaxStreams + maxClaims + agentClaims})
		a.log.WarnContext(ctx, "no RELAY_REDIS_URL set: using the embedded in-memory store; tasks, push configs and deliveries do NOT survive a restart")
	} else if err := a.connect(); err != nil {
		return err
	}
	a.metrics = metrics.New()
	a.rdb.AddHook(a.metrics.Hook())
	a.streamRDB.AddHook(a.metrics.Hook())
	// The task store, the outbox and the work queues share one
	// group-commit batcher, so that commits, delivery reports and the
	// offers and leases of task turns share round trips under load.
	a.layout = layout.New(a.cfg.RedisPrefix, a.cfg.Partitions)
	batch := groupcommit.New(a.rdb)
	a.batch = batch
	onOutbox := a.cfg.DeliveryPath == "outbox"
	usageWindow := max(a.cfg.TaskRetention, a.cfg.DeliveryRetention)
	// The task store and the parts beside it (taskstore.Deps).
	parts := taskstore.Deps{RDB: a.rdb, Keys: a.layout, Batch: batch}
	var err error
	if a.store, err = taskstore.New(parts, taskstore.Config{EventsMaxLen: a.cfg.TaskEventsMaxLen,
		DeliveryRetention: a.cfg.DeliveryRetention, TaskRetention: a.cfg.TaskRetention, Outbox: onOutbox,
		UsageWindow: usageWindow}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.leases = leader.New(a.rdb, a.layout)
	// (a slot in flight outlives the longest attempt)
	if a.throttle, err = throttle.New(a.rdb, a.layout, throttle.Config{Lease: a.cfg.DeliveryTimeout + 5*time.Second}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.hosts, err = taskstore.NewHostValidations(parts); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.urls, err = taskstore.NewURLIndex(parts, taskstore.URLIndexConfig{Horizon: usageWindow + a.cfg.DeliveryRetention}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.turns, err = taskstore.NewTurns(parts); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.compaction, err = taskstore.NewCompaction(parts, taskstore.CompactionConfig{EventsMaxLen: a.cfg.TaskEventsMaxLen, DeliveryRetention: a.cfg.DeliveryRetention}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	// The parts of the outbox (outbox.Deps).
	obParts := outbox.Deps{RDB: a.rdb, Keys: a.layout, Batch: batch}
	obCfg := outbox.Config{DeliveryRetention: a.cfg.DeliveryRetention, Outbox: onOutbox}
	if a.outboxes, err = outbox.NewOutboxes(obParts, obCfg); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.lanes, err = outbox.NewLanes(obParts, obCfg); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.owners, err = outbox.NewOwners(obParts); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.stats, err = outbox.NewStats(obParts); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.replays, err = outbox.NewReplay(obParts, obCfg); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if a.records, err = outbox.NewRecords(obParts, obCfg); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.store.Ping(pctx); err != nil {
		return fmt.Errorf("app: redis at %s does not answer: %w", redactURL(a.cfg.RedisURL), err)
	}
	return a.store.CheckPartitions(pctx)
}

// connect builds the two client pools for RELAY_REDIS_URL: one Redis, or a
// Redis Cluster (every script and multi-key command of relay stays in one
// hash slot, so both work alike). The pool sizes apply per node.
func (a *App) connect() error {
	streamPool := a.cfg.MaxStreams + maxClaims + agentClaims
	if config.IsRedisClusterURL(a.cfg.RedisURL) {
		opt, err := config.RedisClusterOptions(a.cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("app: RELAY_REDIS_URL: %w", err)
		}
		sopt := *opt // copied before NewClusterClient fills in its defaults
		opt.PoolSize, sopt.PoolSize = a.poolSize(), streamPool
		a.rdb = redis.NewClusterClient(opt)
		a.streamRDB = redis.NewClusterClient(&sopt)
		return nil
	}
	opt, err := redis.ParseURL(a.cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("app: RELAY_REDIS_URL: %w", err)
	}
	opt.PoolSize = a.poolSize()
	a.rdb = redis.NewClient(opt)
	sopt := *opt
	sopt.PoolSize = streamPool
	a.streamRDB = redis.NewClient(&sopt)
	return nil
}

// poolSize leaves room for one blocking read per partition, one command per
// delivery worker, and the HTTP handlers.
func (a *App) poolSize() int { return 2*a.cfg.Partitions + a.cfg.DeliveryWorkers + 64 }

// startBackground runs the delivery workers, the stream compactor, the
// re-offerer, the deadline sweeper, the usage tally's flusher and the
// signing-key refresher until Shutdown stops them.
func (a *App) startBackground(w *delivery.Workers, compactor *ingest.Compactor, reoffer *ingest.Reofferer, sweeper *ingest.DeadlineSweeper) {
	ctx, cancel := context.WithCancel(context.Background())
	a.stopBackground, a.background = cancel, make(chan struct{})
	go func() {
		defer close(a.background)
		go a.keys.Run(ctx, 10*time.Second) // a rotation elsewhere is published here within 10s
		go a.swhKeys.Run(ctx, 10*time.Second)
		go a.clients.Run(ctx) // refreshes the client JWT issuer's keys
		var compacting sync.WaitGroup
		compacting.Go(func() { compactor.Run(ctx) })
		compacting.Go(func() { reoffer.Run(ctx) })
		compacting.Go(func() { sweeper.Run(ctx) })
		compacting.Go(func() { a.store.RunUsage(ctx) }) // (closeStore sends what is left)
		defer compacting.Wait()
		var bridges sync.WaitGroup
		if a.demoRouted {
			bridges.Go(func() { _ = a.demo.Run(ctx) }) // it hands its turns back before Redis closes
		}
		for _, b := range a.bridges {
			bridges.Go(func() {
				if err := b.Run(ctx); err != nil {
					a.log.ErrorContext(ctx, "upstream bridge stopped", "err", err)
				}
			})
		}
		defer bridges.Wait() // they hand their tasks back before Redis closes
		if err := w.Run(ctx); err != nil {
			a.log.ErrorContext(ctx, "delivery workers stopped", "err", err)
		}
	}()
}

// stopBackgroundLoops stops what startBackground started and waits for it.
func (a *App) stopBackgroundLoops() {
	if a.stopBackground != nil {
		a.stopBackground()
		<-a.background
		a.stopBackground = nil
	}
}

func (a *App) deliveryConfig() delivery.Config {
	return delivery.Config{
		Workers: a.cfg.DeliveryWorkers, Timeout: a.cfg.DeliveryTimeout, Issuer: a.cfg.PublicURL,
		TokenTTL: a.cfg.JWTTTL, UserAgent: "relay/" + a.version, StandardSignature: a.cfg.WebhookStandardSignature, Secrets: a.ring, Outbox: a.cfg.DeliveryPath == "outbox",
		Policy: delivery.Policy{Initial: a.cfg.RetryInitial, MaxInterval: a.cfg.RetryMaxInterval,
			MaxAttempts: a.cfg.RetryMaxAttempts, MaxElapsed: a.cfg.RetryMaxElapsed},
		HostRate: a.cfg.WebhookHostRateLimit, HostMaxConcurrent: a.cfg.WebhookHostMaxConcurrent,
	}
}

// closeStore sends the task store's usage tally (its last write: nothing
// commits any more), then closes Redis.
func (a *App) closeStore() {
	if a.store != nil && a.rdb != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := a.store.Close(ctx); err != nil {
			a.log.Warn("sending the usage tally", "err", err)
		}
		cancel()
	}
	if a.streamRDB != nil {
		_ = a.streamRDB.Close()
		a.streamRDB = nil
	}
	if a.rdb != nil {
		if err := a.rdb.Close(); err != nil {
			a.log.Warn("closing redis", "err", err)
		}
		a.rdb = nil
	}
	if a.embedded != nil {
		a.embedded.Close()
		a.embedded = nil
	}
}

func (a *App) cardConfig() a2a.CardConfig {
	ag := a.cfg.Agent
	grpcURL := "" // no gRPC listener, no gRPC interface
	if a.cfg.GRPCAddr != "" {
		grpcURL = grpcInterfaceURL(a.cfg.PublicURL, a.cfg.GRPCPublicURL, a.cfg.GRPCAddr)
	}
	cc := a2a.CardConfig{Name: ag.Name, Description: ag.Description, Version: ag.Version,
		URL: a.cfg.PublicURL + "/", RESTURL: a.cfg.PublicURL + rest.Prefix, RESTV03URL: a.cfg.PublicURL,
		GRPCURL: grpcURL, JWKSURL: a.cfg.PublicURL + jwksPath,
		MaxAge: ag.CardMaxAge, Skills: skills(ag.Skills), Streaming: true, Security: a.cardSecurity()}
	if ext := ag.ExtendedCard; ext != nil {
		cc.HasExtended, cc.ExtendedDescription, cc.ExtendedSkills = true, ext.Description, skills(ext.Skills)
		for who, own := range ext.Clients {
			if cc.ExtendedFor == nil {
				cc.ExtendedFor = map[string]a2a.ExtendedCard{}
			}
			cc.ExtendedFor[clientPrincipal(who)] = a2a.ExtendedCard{Description: own.Description, Skills: skills(own.Skills)}
		}
	}
	return cc
}

// grpcInterfaceURL is where the card says the gRPC binding is, as host:port
// (a2a.proto's AgentInterface.url): grpc_public_url when set, else
// public_url's host with the port of the gRPC listener (listen); "" lists
// no gRPC interface (neither is set).
func grpcInterfaceURL(publicURL, grpcPublicURL, listen string) string {
	if grpcPublicURL != "" || listen == "" {
		return grpcPublicURL
	}
	_, port, err := net.SplitHostPort(listen)
	u, uerr := url.Parse(publicURL)
	if err != nil || uerr != nil || u.Hostname() == "" || port == "0" {
		return "" // (port 0: the kernel's choice, which the card cannot know before listening)
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// clientPrincipal is the principal a client of agent.extended_card.clients
// acts for: jwt:<iss>|<sub> as it is, an API key's name as key:<name>.
func clientPrincipal(who string) string {
	if strings.HasPrefix(who, "jwt:") {
		return who
	}
	return "key:" + who
}

// cardSigner signs the agent card with relay's signing keys, which the
// JWKS publishes.
type cardSigner struct{ keys *auth.Keys }

func (s cardSigner) SignCard(payload []byte, jku string) (protected, signature, kid string, err error) {
	j, err := s.keys.SignDetached(payload, jku)
	return j.Protected, j.Signature, j.KID, err
}

func (s cardSigner) CurrentKID() string { return s.keys.CurrentKID() }

// skillTurns are the skills' own turn limits (max_wait, max_run).
func (a *App) skillTurns() map[string]taskstore.TurnLimits {
	out := map[string]taskstore.TurnLimits{}
	all := a.cfg.Agent.Skills
	if ext := a.cfg.Agent.ExtendedCard; ext != nil {
		all = append(slices.Clip(all), ext.AllSkills()...)
	}
	for _, s := range all {
		if l := (taskstore.TurnLimits{Wait: s.MaxWait, Run: s.MaxRun}); l.Any() {
			out[s.ID] = l
		}
	}
	return out
}

func skills(in []config.SkillConfig) []a2a.Skill {
	out := make([]a2a.Skill, len(in))
	for i, s := range in {
		out[i] = a2a.Skill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples}
	}
	return out
}

// redactURL hides the password of a Redis URL in messages.
func redactURL(u string) string {
	if at := strings.LastIndex(u, "@"); at >= 0 {
		if scheme := strings.Index(u, "://"); scheme >= 0 && scheme < at {
			return u[:scheme+3] + "***" + u[at:]
		}
	}
	return u
}

// NewLogger returns the slog logger cfg asks for, writing to w.
func NewLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// webhookProxy parses RELAY_WEBHOOK_PROXY (nil when unset) and logs where
// webhooks go out (without the proxy's credentials).
func (a *App) webhookProxy() (*url.URL, error) {
	if a.cfg.WebhookProxy == "" {
		return nil, nil
	}
	u, err := ssrf.ParseProxy(a.cfg.WebhookProxy)
	if err != nil {
		return nil, fmt.Errorf("app: RELAY_WEBHOOK_PROXY: %w", err)
	}
	a.log.Info("webhooks go through an egress proxy", "proxy", u.Host, "proxy_auth", u.User != nil)
	return u, nil
}
