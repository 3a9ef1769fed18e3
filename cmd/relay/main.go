// Command relay runs relay: an A2A endpoint and webhook push relay.
// It holds no logic: it parses the command line into a config.Config and
// hands it to internal/app.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/config"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// commands heads the help text.
const commands = `Usage:
  relay [serve] [flags]   run the server (the default command)
  relay bench [flags]     run the load tool (relay bench --help)
  relay deliveries ...    read and act on the delivery log of a running relay (relay deliveries --help)
  relay listen [flags]    a development webhook receiver that verifies and prints notifications
  relay hash-key <key>    print the RELAY_API_KEYS form of a client API key's hash
  relay version           print the version

`

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run runs the command named by args[0] (serve when args[0] is absent or a
// flag) and returns the process exit code: 0 ok, 1 failure, 2 bad usage.
func run(args []string, env func(string) string, stdout, stderr io.Writer) int {
	cmd, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, rest = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(rest, env, stdout, stderr)
	case "bench":
		return benchCmd(rest, stdout, stderr)
	case "deliveries":
		return deliveriesCmd(rest, env, stdout, stderr)
	case "listen":
		return listenCmd(rest, env, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "relay %s\n", version)
		return 0
	case "hash-key":
		if len(rest) != 1 || len(rest[0]) < 16 {
			fmt.Fprintln(stderr, "usage: relay hash-key <key>   (a random key of at least 16 characters, e.g. openssl rand -base64 24)")
			return 2
		}
		fmt.Fprintln(stdout, auth.HashAPIKey(rest[0]))
		return 0
	default:
		fmt.Fprintf(stderr, "relay: unknown command %q (see relay --help)\n", cmd)
		return 2
	}
}

// serve runs the server until SIGINT or SIGTERM.
func serve(args []string, env func(string) string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(args, env)
	if errors.Is(err, config.ErrHelp) {
		fmt.Fprint(stdout, commands+config.Usage())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "relay: %v\n", err)
		return 2
	}
	log := app.NewLogger(cfg, stderr)
	a, err := app.New(app.Deps{Log: log, Version: version}, cfg)
	if err != nil {
		log.Error("relay: start failed", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := a.Run(ctx); err != nil {
		log.Error("relay: stopped on error", "err", err)
		return 1
	}
	return 0
}
