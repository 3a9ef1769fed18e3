// Package grpcbind is the gRPC binding of A2A v1.0 (spec §10): the service
// lf.a2a.v1.A2AService of the official a2a.proto, on a listener of its
// own, a thin adapter over the core in package a2a as a2a/jsonrpc and
// a2a/rest are. The messages and the service interface are the ones the
// official Go SDK generates from that proto (github.com/a2aproject/a2a-go/v2,
// package a2apb/v1): relay builds no proto code of its own.
//
// Each method turns its request into v1.0 JSON (ProtoJSON, which the
// core's v1.0 dialect reads), runs it on the a2a.Endpoint, and turns the
// v1.0 JSON result back into the response message. The streaming methods
// open the core's stream with a Framer that sends each event as a
// StreamResponse. Errors are gRPC statuses with the code spec §5.4 gives
// their kind (codes) and the kind's google.rpc details (ErrorInfo,
// BadRequest, QuotaFailure; RetryInfo when a limit says when to retry).
//
// Every A2A call passes the Guard first (credentials in the metadata, as
// "authorization: Bearer <key>", tenant, rate limit); the health
// (grpc.health.v1) and reflection services need no credentials. gRPC speaks
// only v1.0: an a2a-version metadata naming another version is refused.
//
// With a Tracer, every A2A call is a span ("a2a <full method>") that
// continues the W3C traceparent of its metadata (trace.go).
//
// Adding a method: its handler here, mapped to the a2a.Op the core has for
// it. Adding an error kind: its code in codes (the test of codes fails
// until it has one).
package grpcbind

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/telemetry"
)

// Guard admits an A2A call before it runs: it authenticates it, applies the
// client's limits, and returns the context that acts for the client. A
// refusal is an *a2a.Error (KindUnauthenticated, KindLimited). The HTTP
// bindings' guard in package app is the same one.
type Guard interface {
	// Admit admits a call from remote address ip whose metadata header
	// returns by name (case-insensitive).
	Admit(ctx context.Context, ip string, header func(name string) string) (context.Context, error)
}

// Deps are what a Server calls.
type Deps struct {
	// Endpoint runs the operations (required).
	Endpoint *a2a.Endpoint
	// Guard admits each A2A call; nil admits every call as it comes.
	Guard Guard
	// Log receives internal errors (required).
	Log *slog.Logger
	// Observe, when set, is told of every A2A call: its method name and
	// its error (nil for a result).
	Observe func(method string, err *a2a.Error)
	// Tracer traces every call (nil: tracing is off).
	Tracer *telemetry.Tracer
}

// Config is where and how a Server listens.
type Config struct {
	// Addr is the listen address (host:port; required).
	Addr string
	// TLSCert and TLSKey are PEM files of the server's certificate and
	// key: both or neither (plaintext, h2c).
	TLSCert, TLSKey string
	// MaxRecvBytes bounds a request message (0: gRPC's default, 4 MiB).
	MaxRecvBytes int
}

// Server is the gRPC server of the A2A service.
type Server struct {
	cfg    Config
	log    *slog.Logger
	grpc   *grpc.Server
	health *health.Server
	ln     net.Listener
	served chan error
}

// A connection's bounds, where grpc-go's defaults bound nothing (streams)
// or little (16 MiB of metadata): calls past MaxStreamsPerConn wait for a
// slot on their connection, and metadata past MaxHeaderBytes is refused
// before any handler runs (the HTTP bindings read 16 KiB of headers at
// most).
const (
	MaxStreamsPerConn = 128
	MaxHeaderBytes    = 64 << 10
)

// Service is the full name of the A2A service.
const Service = "lf.a2a.v1.A2AService"

// New returns a Server over deps; it listens once started.
func New(deps Deps, cfg Config) (*Server, error) {
	if deps.Endpoint == nil || deps.Log == nil {
		return nil, errors.New("grpcbind: a Server needs an Endpoint and a Log")
	}
	if cfg.Addr == "" {
		return nil, errors.New("grpcbind: no listen address")
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("grpcbind: TLS needs both a certificate and a key")
	}
	g := &guard{guard: deps.Guard, log: deps.Log}
	unary, stream := []grpc.UnaryServerInterceptor{g.unary}, []grpc.StreamServerInterceptor{g.stream}
	if deps.Tracer != nil {
		tr := tracing{deps.Tracer}
		unary, stream = append([]grpc.UnaryServerInterceptor{tr.unary}, unary...), append([]grpc.StreamServerInterceptor{tr.stream}, stream...)
	}
	opts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...),
		grpc.MaxConcurrentStreams(MaxStreamsPerConn), grpc.MaxHeaderListSize(MaxHeaderBytes)}
	if cfg.MaxRecvBytes > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(cfg.MaxRecvBytes))
	}
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("grpcbind: TLS key pair: %w", err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	}
	s := &Server{cfg: cfg, log: deps.Log, grpc: grpc.NewServer(opts...), health: health.NewServer()}
	a2apb.RegisterA2AServiceServer(s.grpc, &service{ep: deps.Endpoint, log: deps.Log, observe: deps.Observe})
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	return s, nil
}

// Start listens and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("grpcbind: listen on %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(Service, healthpb.HealthCheckResponse_SERVING)
	s.served = make(chan error, 1)
	go func() { s.served <- s.grpc.Serve(ln) }()
	return nil
}

// Addr is the address the server listens on (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops taking calls and lets those under way end (open streams
// end when the Endpoint closes them); when ctx ends first, it closes every
// connection.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.served == nil {
		return nil
	}
	s.health.Shutdown() // health checks now answer NOT_SERVING
	done := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
	}
	err := <-s.served
	s.served = nil
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}

// guard runs the Guard for every call but those of the open services,
// and turns a panic of a call into Internal (grpc-go does not recover
// one: it would end the process, where the HTTP bindings recover).
type guard struct {
	guard Guard
	log   *slog.Logger
}

// openServices need no credentials: health and reflection. Every other
// method passes the Guard, whatever its name: a method name the server
// routes though it does not start with the service's /<Service>/ (grpc-go
// accepts one without its leading slash when its strict path checking is
// turned off) is no way around it.
var openServices = []string{"/grpc.health.v1.Health/", "/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/"}

func open(method string) bool {
	for _, p := range openServices {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// recovered turns a panic of a call into the Internal status err.
func (g *guard) recovered(ctx context.Context, method string, err *error) {
	if r := recover(); r != nil {
		g.log.ErrorContext(ctx, "panic in a gRPC call", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = status.Error(codes.Internal, "internal error")
	}
}

func (g *guard) admit(ctx context.Context, method string) (context.Context, error) {
	if g.guard == nil || open(method) {
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	header := func(name string) string {
		if v := md.Get(name); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	ip := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		ip = p.Addr.String()
		if h, _, err := net.SplitHostPort(ip); err == nil {
			ip = h
		}
	}
	actx, err := g.guard.Admit(ctx, ip, header)
	if err != nil {
		e, _ := a2a.AsError(err)
		return ctx, statusOf(e)
	}
	return actx, nil
}

func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (_ any, err error) {
	defer g.recovered(ctx, info.FullMethod, &err)
	ctx, err = g.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return next(ctx, req)
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) (err error) {
	defer g.recovered(ss.Context(), info.FullMethod, &err)
	ctx, err := g.admit(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return next(srv, &admitted{ServerStream: ss, ctx: ctx})
}

// admitted is a stream whose context acts for the client the guard admitted.
type admitted struct {
	grpc.ServerStream
	ctx context.Context
}

func (a *admitted) Context() context.Context { return a.ctx }

// clientConn is what the core's stream takes as its connection: writes have
// no deadline of their own (gRPC's flow control holds them), and the
// client has left once the call's context ends (the core's stream reads
// the connection between events: EOF means gone, a timeout means still
// there).
type clientConn struct {
	net.Conn // never used: the core's stream calls only the methods below
	ctx      context.Context
}

func (c clientConn) SetWriteDeadline(time.Time) error { return nil }
func (c clientConn) SetReadDeadline(time.Time) error  { return nil }

func (c clientConn) Read([]byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, errGone
	}
	return 0, timeout{}
}

var errGone = errors.New("grpcbind: the client left")

// timeout is the net.Error a read of a connection whose client is still
// there ends with.
type timeout struct{}

func (timeout) Error() string   { return "grpcbind: no data" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return true }
